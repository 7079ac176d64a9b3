"""The hazard check (``tlx.check_hazards``): the races between aliased buffers, found on the CPU.

``ttgir`` reads the TTGIR text Triton prints; ``ops`` is the table of what each TTGIR
operation reads, writes and how it completes. docs/hazards.md says what is modelled.
"""

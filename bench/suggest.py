"""Suggested reuse trees against the hand-written ones, on every tutorial kernel.

    python bench/suggest.py [--only NAME]

For each tutorial kernel of the hazard check's corpus (test/hazards/corpus.py: Hopper attention
forward and backward, the GEMMs, the fused MLPs, Blackwell attention), the kernel's trees are
stripped and ``tlx.suggest_reuse`` asked for a suggestion: per spec, the region of the
hand-written tree, of the tree the inference alone finds and of the suggested one (the smaller of
the two, the hand-written on a tie; bytes for SMEM, columns for TMEM), the result (clean: the
kernel with the suggested trees checks clean), and the seconds of each step: Triton's front end
and TTGIR pipeline, the pairs and the search, the proof (a trace and check of its own). The last
line times the largest kernel (the most buffer indices) after the front end: the pairs, the
search and the proof (docs/suggest.md; the goal is under 10 s).
"""

import argparse
import importlib.util
import sys
import time
from pathlib import Path

import tlx
from tlx.suggest.search import buffer_count

REPOSITORY = Path(__file__).resolve().parents[1]


def _corpus():
    """test/hazards/corpus.py, a module beside the tests, loaded by its path."""
    path = REPOSITORY / "test" / "hazards" / "corpus.py"
    spec = importlib.util.spec_from_file_location("corpus", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["corpus"] = module
    spec.loader.exec_module(module)
    return module


def rows(keys, largest):
    """(kernel, spec, unit, hand-written, inferred, suggested, result, TTGIR s, search s, proof
    s, all s); ``largest`` (a dict) gets the kernel with the most buffer indices: its name,
    its buffer indices and its seconds after the front end."""
    corpus = _corpus()
    for key in keys:
        source, target, options, values = corpus.kernel(key)
        started = time.perf_counter()
        suggestion = tlx.suggest_reuse(source, target, options, values=values)
        seconds = time.perf_counter() - started
        indices = sum(buffer_count(b) for spec in suggestion.specs for b in spec.buffers)
        if indices > largest.get("indices", 0):
            after = suggestion.search_seconds + suggestion.proof_seconds
            largest.update(kernel=key, indices=indices, seconds=after)
        for spec in suggestion.specs:
            unit = "bytes" if spec.spec.storage.value == "smem" else "columns"
            own = spec.own_plan.region_size if spec.own_plan and spec.own_plan.ok else None
            inferred = spec.search.inferred
            yield (
                key,
                spec.name,
                unit,
                own,
                inferred.region_size if inferred else None,
                spec.plan.region_size if spec.plan else None,
                suggestion.result,
                suggestion.ttgir_seconds,
                suggestion.search_seconds,
                suggestion.proof_seconds,
                seconds,
            )


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="", help="kernels whose name contains this")
    arguments = parser.parse_args(argv)
    keys = [key for key in _corpus().TUTORIAL_KERNELS if arguments.only in key]
    header = (
        "kernel",
        "spec",
        "unit",
        "hand-written",
        "inferred",
        "suggested",
        "result",
        "TTGIR s",
        "search s",
        "proof s",
        "total s",
    )
    print(" | ".join(header))
    largest: dict = {}
    for row in rows(keys, largest):
        cells = [f"{cell:.2f}" if isinstance(cell, float) else str(cell) for cell in row]
        print(" | ".join(cells), flush=True)
    if largest:
        print(
            f"largest kernel: {largest['kernel']} ({largest['indices']} buffer indices): "
            f"{largest['seconds']:.2f} s after Triton's front end (pairs, search and proof)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())

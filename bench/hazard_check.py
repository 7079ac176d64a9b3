"""How long the hazard check takes, per kernel: every tutorial kernel, every seeded race of the
corpus and every racy kernel of the user's batch (test/hazards), on the CPU.

    python bench/hazard_check.py [--repeat 3]

For each kernel: the seconds Triton's front end and its TTGIR pipeline take to make the TTGIR
(``tlx.check_hazards`` does it first), the seconds of the check itself (reading the TTGIR, the
abstract execution of one CTA, the race check), the operations executed, the accesses to
aliased buffers, and the result. Medians of ``--repeat`` runs.
"""

import argparse
import importlib.util
import os
import statistics
import sys
import time
from pathlib import Path

import tlx
from tlx.hazards import check as _hazards
from tlx_kernels.blackwell import two_cta_mma

REPOSITORY = Path(__file__).resolve().parents[1]


def _hazards_module(name):
    """test/hazards/``name``.py (the corpus or its small kernels): a folder of modules beside
    the tests, not a package, loaded by its path."""
    path = REPOSITORY / "test" / "hazards" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


corpus = _hazards_module("corpus")
kernels = _hazards_module("kernels")
barrier_reinit = _hazards_module("barrier_reinit")
chunked_writes = _hazards_module("chunked_writes")
partition_order = _hazards_module("partition_order")
parity_and_count = _hazards_module("parity_and_count")
tcgen05_shape = _hazards_module("tcgen05_shape")
# Issue 47's batch of a demanding user's kernels (docs/hazards.md, "A user's batch").
BATCH = tuple(_hazards_module(name) for name in ("sm90_pairs", "sm90_loops", "sm100_pairs"))

TUTORIAL_KERNELS = corpus.TUTORIAL_KERNELS


def _small_tutorials():
    basics = corpus._tutorial_file("01-aliasing-basics.py")
    return (
        ("01-aliasing-basics", basics.kernel_source(), basics.SM90A, {}, {}),
        (
            "blackwell_two_cta_mma",
            two_cta_mma.kernel_source(),
            two_cta_mma.SM100A,
            two_cta_mma.COMPILE_OPTIONS,
            {},
        ),
    )


def rows():
    """(name, result, TTGIR seconds, check seconds, operations, accesses) of every kernel."""
    for key in TUTORIAL_KERNELS:
        source, target, options, values = corpus.kernel(key)
        yield (
            key,
            lambda s=source, t=target, o=options, v=values: tlx.check_hazards(s, t, o, values=v),
        )
    for name, source, target, options, values in _small_tutorials():
        yield (
            name,
            lambda s=source, t=target, o=options, v=values: tlx.check_hazards(s, t, o, values=v),
        )
    for seed in corpus.SEEDS:
        source, target, options, values = corpus.kernel(seed.kernel)

        def check(seed=seed, source=source, target=target, options=options, values=values):
            started = time.perf_counter()
            text, plans = _hazards.kernel_ttgir(source, target, options)
            made = time.perf_counter() - started
            report = _hazards.check_ttgir(corpus.mutate(text, seed), plans, values=values)
            return report.__class__(**{**report.__dict__, "ttgir_seconds": made})

        yield f"seed: {seed.name}", check
    for name, source_of, target, _ in (
        *kernels.seeds(),
        *chunked_writes.seeds(),
        *barrier_reinit.seeds(),
        *partition_order.seeds(),
        *parity_and_count.seeds(),
        *tcgen05_shape.seeds(),
    ):
        yield (
            f"seed: {name}",
            lambda f=source_of, t=target: tlx.check_hazards(f(False), t, {"num_warps": 4}),
        )
    for module in BATCH:
        values = getattr(module, "VALUES", {})
        for name, source_of, target, _ in module.seeds():
            yield (
                f"batch: {name}",
                lambda f=source_of, t=target, v=values: tlx.check_hazards(
                    f(False), t, {"num_warps": 4}, values=v
                ),
            )


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    arguments = parser.parse_args(argv)
    os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
    print(f"{'kernel':58} {'result':10} {'TTGIR s':>8} {'check s':>8} {'ops':>6} {'accesses':>8}")
    for name, run in rows():
        reports = [run() for _ in range(arguments.repeat)]
        ttgir = statistics.median(report.ttgir_seconds for report in reports)
        check = statistics.median(report.seconds for report in reports)
        report = reports[0]
        print(
            f"{name[:58]:58} {report.result:10} {ttgir:8.2f} {check:8.2f} "
            f"{report.operations:6} {report.accesses:8}"
        )


if __name__ == "__main__":
    main()

"""test/gpu/conftest.py's watchdog ends a GPU test run whose test never returns (a kernel
that never ends would), naming the test, rather than letting it hold the machine."""

import os
import shutil
import subprocess
import sys
import time

from _helpers import REPOSITORY


def test_a_test_past_its_time_ends_the_run_with_its_stack(tmp_path):
    shutil.copy(REPOSITORY / "test" / "gpu" / "conftest.py", tmp_path / "conftest.py")
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    (tmp_path / "test_hangs.py").write_text(
        "import time\n\n\ndef test_a_kernel_that_never_ends():\n    time.sleep(600)\n"
    )
    environment = {**os.environ, "TLX_GPU_TEST_TIMEOUT": "2"}
    started = time.monotonic()
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-s", "-q", "-p", "no:cacheprovider", str(tmp_path)],
        cwd=tmp_path,
        env=environment,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode != 0
    assert "test_a_kernel_that_never_ends" in run.stderr
    assert time.monotonic() - started < 120

"""The complete example of README.md runs on a Hopper GPU and checks itself."""

import pytest
from _helpers import load_api_example

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("needs a CUDA GPU", allow_module_level=True)


def test_api_example_runs(tmp_path, capsys):
    example = load_api_example(tmp_path)
    example.main()
    assert "halves alias the words; flags are untouched" in capsys.readouterr().out

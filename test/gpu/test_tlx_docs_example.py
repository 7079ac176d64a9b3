"""The complete example of docs/api.md runs on a Hopper GPU and checks itself."""

import importlib.util
import re
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("needs a CUDA GPU", allow_module_level=True)

API_DOC = Path(__file__).resolve().parents[2] / "docs" / "api.md"


def test_api_example_runs(tmp_path, capsys):
    block = re.search(r"```python\n(.*?)```", API_DOC.read_text(), re.DOTALL).group(1)
    path = tmp_path / "api_example.py"
    path.write_text(block)
    spec = importlib.util.spec_from_file_location("api_example", path)
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    example.main()
    assert "halves alias the words; flags are untouched" in capsys.readouterr().out

"""tests/shared_data.py: a test that needs a file of ../shared/data skips with one line naming it, or
fails where COMPAUG_REQUIRE_SHARED_DATA=1 (CI) says the data must be there."""
import pytest

from tests.shared_data import REQUIRE_ENV, require_files


def test_a_missing_file_skips_naming_it(monkeypatch):
    monkeypatch.delenv(REQUIRE_ENV, raising=False)
    with pytest.raises(pytest.skip.Exception) as skipped:
        require_files(["README.md", "../no-such-folder/data/mawps/MAWPS.json"])
    message = str(skipped.value)
    assert message.startswith("needs ../no-such-folder/data/mawps/MAWPS.json (") and "\n" not in message
    assert "no such file" in message


def test_ci_turns_the_skip_into_a_failure(monkeypatch):
    monkeypatch.setenv(REQUIRE_ENV, "1")
    with pytest.raises(pytest.fail.Exception, match="needs ../no-such-folder/x.json"):
        require_files(["../no-such-folder/x.json"])


def test_files_that_exist_go_through(monkeypatch):
    monkeypatch.setenv(REQUIRE_ENV, "1")
    require_files(["README.md", "prefect.yaml"])

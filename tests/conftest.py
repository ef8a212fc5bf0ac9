import pytest


@pytest.fixture
def interpreter(monkeypatch):
    """Run launches in this test on the interpreter target."""
    monkeypatch.setenv("TRITIUM_TARGET", "interpreter")

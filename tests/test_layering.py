"""The house rule of ../shared/GUIDE.md: solvers/, ranking/, mwp/ and the pure parts of tasks/ never
import prefect or mlflow (only the edges, tasks/*/steps.py for Prefect and tasks/loop/tracking.py, startup.py for
MLflow, and flows/ do), and arrows point down only: cli -> flows -> tasks -> (solvers, ranking) -> mwp."""
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EDGE = {"tasks.loop.steps", "tasks.dbca.steps",  # one module of Prefect tasks per flow family
        "tasks.loop.tracking",  # the loop's MLflow records
        "tasks.loop.startup"}  # the MLflow store opened under a lock, before any flow run
PURE_PACKAGES = ("tasks.augment", "tasks.dbca", "tasks.loop")


def _modules():
    for package in ("mwp", "solvers", "ranking", "tasks"):
        for path in sorted((ROOT / package).rglob("*.py")):
            name = ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
            if name not in EDGE:
                yield name


def test_pure_layers_import_neither_prefect_nor_mlflow():
    modules = list(_modules())
    assert "tasks.augment.geca" in modules and "solvers.gts" in modules and "ranking.scores" in modules
    for package in PURE_PACKAGES:  # every folder of tasks/ is covered
        assert any(m.startswith(package + ".") for m in modules), package
    script = ("import importlib, sys\n"
              f"for name in {modules!r}:\n"
              "    importlib.import_module(name)\n"
              "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('prefect', 'mlflow'))\n"
              "print(','.join(bad))\n")
    out = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "", f"pure layers pulled in: {out.stdout.strip()}"


def test_solvers_and_ranking_do_not_import_flows_or_task_edges():
    offenders = []
    for package in ("solvers", "ranking", "mwp"):
        for path in (ROOT / package).rglob("*.py"):
            text = path.read_text(encoding="utf-8")
            if "from flows" in text or "import flows" in text or "from tasks" in text:
                offenders.append(str(path.relative_to(ROOT)))
    assert offenders == []


def test_solvers_and_ranking_know_nothing_of_dask():
    """Scoring on Dask workers is the business of tasks/loop/sharding.py and the flows, not of the models."""
    offenders = []
    for package in ("solvers", "ranking", "mwp"):
        for path in (ROOT / package).rglob("*.py"):
            if re.search(r"^\s*(import|from) (dask|distributed|prefect_dask)\b", path.read_text(encoding="utf-8"),
                         re.MULTILINE):
                offenders.append(str(path.relative_to(ROOT)))
    assert offenders == []


def test_the_prefect_edges_are_the_only_task_modules_that_import_prefect():
    offenders = []
    for path in (ROOT / "tasks").rglob("*.py"):
        name = ".".join(path.relative_to(ROOT).with_suffix("").parts)
        text = path.read_text(encoding="utf-8")
        if name not in EDGE and re.search(r"^\s*(import|from) (prefect|mlflow)\b", text, re.MULTILINE):
            offenders.append(name)
    assert offenders == []


def _importers(packages, names) -> list[str]:
    """Files of ``packages`` that import any of the top-level packages ``names``."""
    pattern = re.compile(rf"^\s*(from|import) ({'|'.join(names)})\b", re.MULTILINE)
    return [str(p.relative_to(ROOT)) for package in packages for p in (ROOT / package).rglob("*.py")
            if pattern.search(p.read_text(encoding="utf-8"))]


def test_tasks_never_import_flows_or_the_command_line():
    assert _importers(["tasks"], ["flows", "cli"]) == []


def test_nothing_below_the_command_line_imports_it():
    assert (ROOT / "cli" / "main.py").is_file()
    assert _importers(["flows", "tasks", "solvers", "ranking", "mwp"], ["cli"]) == []


def test_flows_holds_flows_and_their_runtime_not_the_command_line():
    assert sorted(p.stem for p in (ROOT / "flows").glob("cli*.py")) == []

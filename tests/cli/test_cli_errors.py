"""Bad input on the command line ends in one line naming the file or parameter and exit status 2, before
any run directory or MLflow run exists; --debug shows the traceback."""
import json

import pytest
import torch

from cli.main import main


@pytest.mark.parametrize("argv, fragment", [
    (["run", "--format", "mawps", "{tmp}/missing.json"], "missing.json: no such file"),
    (["run", "--params", "{tmp}/missing.json"], "missing.json"),
    (["run", "--params", "{tmp}/broken.json"], "not JSON"),
    (["run", "--split", "{tmp}/missing.json"], "split file {tmp}/missing.json: cannot read it as JSON"),
    (["run", "--split", "{tmp}/list.json"], "expected a JSON object"),
    (["run", "--device", "foo"], "device must be auto, cpu, cuda or cuda:N, got 'foo'"),
    (["run", "--model", "dropout=2"], "dropout must lie in [0, 1), got 2"),
    (["run", "--experiment", "../../elsewhere"], "experiment: String should match pattern"),
    (["run", "--out", "{tmp}/a-file"], "cannot write there"),
    (["split", "--format", "mawps", "{tmp}/missing.json", "--out", "{tmp}/s.json"], "missing.json: no such file"),
    (["sd", "--format", "mawps", "--out", "{tmp}/sd"], "needs a data file"),
    (["run", "--solver", "bert-gts", "--pretrained", "{tmp}/missing"],
     "pretrained_path '{tmp}/missing' is not a local folder"),
    (["run", "--tracking-uri", "foo://user:pw@host/x", "--out", "{tmp}/runs"],
     "tracking URI foo://user:***@host/x: MLflow has no store for the scheme 'foo'"),
    (["run", "--solver", "transformer", "--bucketing", "steps"],
     "train.bucketing steps: solver transformer does not count its decoder's steps"),
    (["run", "--solver", "lstm", "--step", "dense"], "train.step dense: solver lstm has no shape-fixed pass"),
    pytest.param(["run", "--step", "graphed", "--precision", "fp32", "--out", "{tmp}/runs"],
                 "step graphed captures CUDA graphs and needs a CUDA device; device auto is the CPU here",
                 marks=pytest.mark.skipif(torch.cuda.is_available(), reason="auto is CUDA on this machine")),
])
def test_bad_input_is_one_line_and_exit_2_before_any_work(argv, fragment, tmp_path, capsys):
    (tmp_path / "broken.json").write_text("{not json")
    (tmp_path / "list.json").write_text(json.dumps(["a", "b"]))
    (tmp_path / "a-file").write_text("")
    argv = [a.replace("{tmp}", str(tmp_path)) for a in argv]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    assert fragment.replace("{tmp}", str(tmp_path)) in err
    assert not (tmp_path / "runs").exists() and not list(tmp_path.glob("**/mlflow.db"))


def test_debug_shows_the_traceback(tmp_path):
    with pytest.raises(ValueError, match="device must be"):
        main(["--debug", "run", "--device", "foo"])


@pytest.mark.parametrize("command", [["study", "--dask-address"], ["run", "--score-dask-address"]])
def test_an_unreachable_dask_scheduler_is_one_line_before_any_training(command, tmp_path, capsys):
    assert main([*command, "tcp://127.0.0.1:9", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Dask scheduler tcp://127.0.0.1:9 is not reachable" in err
    assert not any(tmp_path.iterdir())


@pytest.mark.skipif(torch.cuda.is_available(), reason="auto is CUDA on this machine")
def test_a_study_whose_cells_would_capture_cuda_graphs_on_the_cpu_is_one_line_before_any_training(tmp_path, capsys):
    out = tmp_path / "out"
    (tmp_path / "study.json").write_text(json.dumps({"out_dir": str(out),
                                                     "train": {"step": "graphed-whole", "precision": "fp32"}}))
    assert main(["study", "--params", str(tmp_path / "study.json")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "step graphed-whole captures CUDA graphs" in err
    assert "device auto is the CPU here" in err and not out.exists()
    assert main(["study", "--params", str(tmp_path / "study.json"), "--dry-run"]) == 0  # a plan for a GPU box
    assert "note: step graphed-whole captures CUDA graphs and device auto is the CPU here: costs measured with " \
           "step rowwise" in capsys.readouterr().out


def _port_where_nothing_listens() -> int:
    import socket

    with socket.socket() as probe:  # the kernel's free port, closed again: nothing listens there
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.mark.parametrize("uri", ["http://127.0.0.1:{port}", "postgresql://mlflow:secret@127.0.0.1:{port}/mlflow"])
@pytest.mark.parametrize("command", ["run", "study"])
def test_an_unreachable_tracking_server_is_one_line_before_any_training(command, uri, tmp_path, capsys):
    import time

    uri = uri.format(port=_port_where_nothing_listens())
    out = tmp_path / "out"
    if command == "run":
        argv = ["run", "--tracking-uri", uri, "--out", str(out)]
    else:  # a study takes its tracking URI from its parameter file
        (tmp_path / "study.json").write_text(json.dumps({"tracking_uri": uri, "out_dir": str(out)}))
        argv = ["study", "--params", str(tmp_path / "study.json")]
    start = time.perf_counter()
    assert main(argv) == 2
    assert time.perf_counter() - start < 10  # MLflow's own retries took about 260 s
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    shown = uri.replace(":secret@", ":***@")  # the password is not printed
    assert f"compaug {command}: error: tracking server {shown} is not reachable: " in err
    assert "Connection refused" in err and "secret" not in err
    assert not out.exists() or not any(out.iterdir())  # no run directory, no MLflow store

"""How ``tidal logs`` puts a job's logs together, and keeps one vertex's."""

from jobmanager.client.joblogs import render_logs

LOGS = {
    "jobmanager": b"a job manager ready\nwarning task failed vertex=sum subtask=0\n"
    b"info source parallelism inferred vertex=numbers\n",
    "tidal-tm-0": b"# tidal-tm-0 (pid 7) ran tasks of: numbers, sum\n\x1b[2mspark says hi\x1b[0m\n",
    "tidal-tm-1": b"# tidal-tm-1 (pid 8) ran tasks of: sink\nwrote\n",
}


def test_every_process_is_shown_under_its_name_without_colour_codes():
    text = render_logs(LOGS)
    assert text.index("==> jobmanager <==") < text.index("==> tidal-tm-0 <==")
    assert "spark says hi" in text and "\x1b" not in text


def test_one_vertex_keeps_the_job_managers_lines_on_it_and_the_task_managers_that_ran_it():
    text = render_logs(LOGS, vertex="sum")
    job_manager = text.split("==> tidal-tm-0 <==")[0]
    assert "task failed vertex=sum" in job_manager and "vertex=numbers" not in job_manager
    assert "==> tidal-tm-0 <==" in text and "tidal-tm-1" not in text

"""What a job did and why: ``tidal explain``, the HTML job report and ``tidal history``, all
read from the job's event log (its store, or its archive once it ended)."""

from jobmanager.client.report.explain import explain_lines
from jobmanager.client.report.facts import JobFacts, facts_from_log
from jobmanager.client.report.page import report_file_name, report_html
from jobmanager.client.report.stores import find_job, history, job_facts

__all__ = [
    "JobFacts",
    "explain_lines",
    "facts_from_log",
    "find_job",
    "history",
    "job_facts",
    "report_file_name",
    "report_html",
]

"""Five ordinary PySpark pipelines (plain scripts, DataFrame API only), their inputs
(``data.py``) and running them and reading their outputs (``outputs.py``)."""

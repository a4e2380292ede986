"""lara: measuring agentic retrieval from production logs.

The dbt project at the repository root builds the marts; this package holds
the tools around it: the sample-log generator, the statistics, the
data-quality gate and the `lara` command line.
"""

__version__ = "0.1.0"

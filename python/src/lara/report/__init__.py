"""The static HTML dashboard of the marts (`lara report`): see dashboard.py."""

from lara.report.dashboard import DEFAULT_DASHBOARD_PATH, build_dashboard, render_dashboard

__all__ = ["DEFAULT_DASHBOARD_PATH", "build_dashboard", "render_dashboard"]

"""Prometheus integration (issue 21): metric catalogue, exporter, SONiC counters, alert and
recording rules, Grafana dashboard, and Prometheus range data as diagnose evidence."""

"""Vendor dialects: device configs and host state read into one observed model (and, later,
rendered from the fabric intent). ``observed`` holds the canonical shape; ``load`` reads a
directory of configs into it."""

"""Performance figures (`make bench`): JSON in build/report/bench.json, ratios from one run."""

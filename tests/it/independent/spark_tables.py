"""PySpark as a second reader of agentwire's Parquet tables (run with spark-submit, local
mode): runs the fleet job `scripts/spark/analyze_fleet.py` (shipped with `--py-files`,
the binary with `--files`) over TRACES into FLEET, then reads both FLEET and the
single-machine tables SINGLE with Spark's own Parquet reader and prints, for each, what
Spark computes: requests, polls, redundant polls, wasted dollars per CLI version, rows
per table and partition, and the distinct schema_version/agent/provider/dialect values.
Nothing here is agentwire's arithmetic; the Rust test compares the figures with DuckDB's
and the scenario's.

usage: spark-submit … spark_tables.py SINGLE TRACES FLEET
"""

import json
import sys

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

import analyze_fleet

TABLES = ["requests", "episodes", "jobs", "decisions", "threads"]


def read(spark, path):
    try:
        return spark.read.parquet(path)
    except Exception as e:
        import os
        listing = [os.path.join(d, f) for d, _, fs in os.walk(path.replace("file:", "")) for f in fs]
        raise SystemExit("spark cannot read %s (files: %s): %s" % (path, listing, e))


def figures(spark, root):
    t = {name: read(spark, root + "/" + name) for name in TABLES}
    ep = t["episodes"].agg(F.sum("polls"), F.sum("redundant"), F.sum("wasted_cost_usd")).first()
    by_version = {r[0]: r[1] for r in t["episodes"].groupBy("cli_version")
                  .agg(F.sum("wasted_cost_usd")).collect()}
    rows = {}
    for name, df in t.items():
        rows[name] = {"%s|%s" % (r[0], r[1]): r[2] for r in df.groupBy("cli_version", "date")
                      .count().collect()}
    origin = {name: sorted("%s|%s|%s|%s" % tuple(r) for r in df.select(
        "schema_version", "agent", "provider", "dialect").distinct().collect())
        for name, df in t.items()}
    return {
        "requests": t["requests"].count(),
        "polls": ep[0],
        "redundant": ep[1],
        "wasted_cost_usd": ep[2],
        "wasted_by_version": by_version,
        "rows": rows,
        "origin": origin,
        "files": sorted(r[0] for r in t["requests"].select("file").distinct().collect()),
    }


def main():
    single, traces, fleet = sys.argv[1:4]
    spark = (SparkSession.builder.master("local[2]").appName("agentwire spark test")
             .config("spark.sql.sources.partitionColumnTypeInference.enabled", "false")
             .config("spark.ui.enabled", "false")
             .getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    # The job itself, through its command line, in this session (one JVM for both checks).
    analyze_fleet.main([traces, fleet, "--partitions", "4", "--glob", "*.jsonl"])
    out = {"single": figures(spark, single), "fleet": figures(spark, fleet)}
    print("SPARK-FIGURES " + json.dumps(out, sort_keys=True))
    spark.stop()


if __name__ == "__main__":
    main()

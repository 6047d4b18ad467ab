#!/usr/bin/env python3
"""agentwire's per-trace analysis on Spark workers: one Hive-partitioned table set.

    spark-submit --master yarn --files /usr/local/bin/agentwire \\
        scripts/spark/analyze_fleet.py s3a://bucket/traces/ s3a://bucket/agentwire/

1. Lists the trace files under INPUT (a directory or an object-store prefix: any Hadoop
   path Spark reads, `file:`, `hdfs://`, `s3a://`, `gs://`, `abfss://`; recursively,
   `--glob` filters names) with Spark's `binaryFile` source, which also reads their bytes
   on the workers.
2. Spreads the files over `--partitions` Spark tasks (default: the cluster's default
   parallelism). Each task writes its files into a local temporary directory and runs
   `agentwire analyze --parquet` on that directory: the binary shipped with `--files`
   (found with `SparkFiles`), else `--agentwire PATH`, else `agentwire` on the PATH.
   Sessions never span files, so every file's figures are what the single-machine
   `agentwire analyze DIR --parquet` gives.
3. Each Parquet file agentwire wrote comes back as a row; Spark reads them with PyArrow
   and writes each table (`requests`, `episodes`, `jobs`, `decisions`, `threads`) below
   OUTPUT/TABLE, partitioned by `cli_version` and `date` as agentwire's own tables are,
   with the same columns, plus `batch` (the task that ran agentwire: session and thread
   labels are unique within a batch, so join on `batch` and `thread`). In `requests`,
   `file` is the file's Hadoop path and `trace` its index among the listed files (sorted).
   A table without rows is one empty file in Hive's null partition, as agentwire writes it.

Bounds: Spark's `binaryFile` reads files of at most 2 GiB; a task streams its files to
local disk one at a time and keeps them there while agentwire runs. A task whose agentwire run fails fails with
agentwire's message (Spark retries it, then stops the job). Needs PySpark and PyArrow on
the driver and the workers. No scheduler of its own: Spark places and retries the tasks.
"""

import argparse
import os
import shutil
import stat
import subprocess
import sys
import tempfile
from urllib.parse import unquote

TABLES = ["requests", "episodes", "jobs", "decisions", "threads"]
# Hive's marker of a null partition value (agentwire writes it for an empty table).
HIVE_NULL = "__HIVE_DEFAULT_PARTITION__"


def parse_args(argv):
    p = argparse.ArgumentParser(
        prog="analyze_fleet.py",
        description="run `agentwire analyze --parquet` on Spark workers over a directory "
        "or object-store prefix of traces; write one Hive-partitioned table set",
    )
    p.add_argument("input", help="directory or prefix of trace files (a Hadoop path)")
    p.add_argument("output", help="where the tables go: OUTPUT/requests, OUTPUT/episodes, …")
    p.add_argument("--partitions", type=int, default=0,
                   help="agentwire runs (Spark tasks); default: the default parallelism")
    p.add_argument("--agentwire", default=None,
                   help="the binary on the workers (default: the one shipped with "
                   "--files, else `agentwire` on the PATH)")
    p.add_argument("--glob", default="*", help="file name filter (pathGlobFilter), e.g. '*.jsonl'")
    p.add_argument("--overwrite", action="store_true", help="replace existing tables")
    p.add_argument("--analyze-arg", action="append", default=[], metavar="ARG",
                   help="one more argument for `agentwire analyze` (e.g. --usage), repeatable")
    return p.parse_args(argv)


def worker_binary(wanted):
    """The agentwire binary on this worker, executable (a file shipped with `--files`
    may arrive without its execute bit)."""
    if wanted is None:
        from pyspark import SparkFiles

        shipped = os.path.join(SparkFiles.getRootDirectory(), "agentwire")
        if os.path.isfile(shipped):
            wanted = shipped
        else:
            wanted = shutil.which("agentwire")
            if wanted is None:
                raise RuntimeError("analyze_fleet: no agentwire on this worker: ship it "
                                   "with `spark-submit --files PATH/agentwire`, install it "
                                   "on the PATH, or give --agentwire PATH")
    if not os.access(wanted, os.X_OK):
        copy = os.path.join(tempfile.mkdtemp(prefix="agentwire-bin-"), "agentwire")
        shutil.copyfile(wanted, copy)
        os.chmod(copy, stat.S_IRWXU)
        wanted = copy
    return wanted


def run_batch(binary, extra_args, index):
    """The task body: `rows` are (`path`, `content`) of this task's files; yields one
    tuple per Parquet file agentwire wrote: (table, cli_version, date, batch, bytes)."""

    def run(rows):
        from pyspark import TaskContext

        batch = TaskContext.get().partitionId()
        with tempfile.TemporaryDirectory(prefix="agentwire-spark-") as tmp:
            traces = os.path.join(tmp, "traces")
            os.mkdir(traces)
            n = 0
            for path, content in rows:
                # The global index first: the directory's order is the listing's.
                name = "%08d-%s" % (index.value[path], os.path.basename(path))
                with open(os.path.join(traces, name), "wb") as f:
                    f.write(content)
                n += 1
            if n == 0:
                return
            tables = os.path.join(tmp, "tables")
            cmd = [worker_binary(binary), "analyze", "--format", "json", *extra_args,
                   "--parquet", tables, traces]
            done = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            if done.returncode != 0:
                raise RuntimeError("analyze_fleet: agentwire analyze failed (exit %d) on "
                                   "batch %d: %s" % (done.returncode, batch,
                                                     done.stderr.decode(errors="replace")))
            key = lambda v: None if v == HIVE_NULL else unquote(v)
            for table in TABLES:
                for root, _, files in os.walk(os.path.join(tables, table)):
                    for f in sorted(files):
                        version = os.path.basename(os.path.dirname(root)).split("=", 1)[1]
                        date = os.path.basename(root).split("=", 1)[1]
                        with open(os.path.join(root, f), "rb") as fh:
                            yield (table, key(version), key(date), batch, fh.read())

    return run


def spark_type(t):
    """The Spark type of an Arrow type of agentwire's tables (int64, double, string)."""
    import pyarrow as pa
    from pyspark.sql import types as T

    if pa.types.is_int64(t):
        return T.LongType()
    if pa.types.is_float64(t):
        return T.DoubleType()
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return T.StringType()
    raise ValueError("analyze_fleet: agentwire wrote a column of type %s, which this job "
                     "does not know; use the analyze_fleet.py of the same release" % t)


def table_schema(sample):
    """The Spark schema of a table from one of its files (bytes), with the partition
    keys and `batch` added."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    from pyspark.sql import types as T

    fields = [T.StructField(f.name, spark_type(f.type), f.nullable)
              for f in pq.read_schema(pa.BufferReader(sample))]
    fields += [T.StructField("batch", T.LongType(), False),
               T.StructField("cli_version", T.StringType(), True),
               T.StructField("date", T.StringType(), True)]
    return T.StructType(fields)


def read_files(paths):
    """The rows of one table from agentwire's files (`blobs` tuples), with `batch` and
    the partition keys; in `requests`, `file` and `trace` name the listed file."""

    def read(blob):
        import pyarrow as pa
        import pyarrow.parquet as pq

        _, version, date, batch, data = blob
        t = pq.read_table(pa.BufferReader(data))
        cols = t.column_names
        rows = zip(*(t.column(c).to_pylist() for c in cols)) if t.num_rows else []
        for row in rows:
            row = dict(zip(cols, row))
            if "file" in row and "trace" in row:
                ix = int(os.path.basename(row["file"]).split("-", 1)[0])
                row["file"], row["trace"] = paths.value[ix], ix
            yield tuple(row[c] for c in cols) + (batch, version, date)

    return read


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    from pyspark.sql import SparkSession
    from pyspark.sql import types as T

    spark = SparkSession.builder.appName("agentwire analyze_fleet").getOrCreate()
    files = (spark.read.format("binaryFile")
             .option("recursiveFileLookup", "true")
             .option("pathGlobFilter", args.glob)
             .load(args.input))
    paths = sorted(r.path for r in files.select("path").collect())
    if not paths:
        sys.exit("analyze_fleet: no files under %s match %r; give the directory or prefix "
                 "that holds the traces" % (args.input, args.glob))
    sc = spark.sparkContext
    index = sc.broadcast({p: i for i, p in enumerate(paths)})
    listed = sc.broadcast(paths)
    parts = args.partitions or sc.defaultParallelism
    blobs = (files.select("path", "content").repartition(parts).rdd
             .mapPartitions(run_batch(args.agentwire, args.analyze_arg, index))
             .persist())
    mode = "overwrite" if args.overwrite else "errorifexists"
    for table in TABLES:
        of_table = blobs.filter(lambda b, t=table: b[0] == t)
        sample = of_table.first()
        df = spark.createDataFrame(of_table.flatMap(read_files(listed)),
                                   table_schema(sample[4]))
        out = args.output.rstrip("/") + "/" + table
        if df.isEmpty():
            # Spark writes no file for an empty partitioned table; agentwire's convention
            # (one empty file in Hive's null partition) keeps its schema readable.
            (df.drop("cli_version", "date").coalesce(1).write.mode(mode)
             .parquet("%s/cli_version=%s/date=%s" % (out, HIVE_NULL, HIVE_NULL)))
        else:
            df.write.mode(mode).partitionBy("cli_version", "date").parquet(out)
    blobs.unpersist()
    print("analyze_fleet: %d files in %d batches: tables in %s"
          % (len(paths), parts, args.output))


if __name__ == "__main__":
    main()

"""Spark's pi example, slowed: every partition sleeps first, so a test can act on the
application while its tasks run. Arguments: partitions (default 2), seconds per partition
(default 1)."""

import sys
import time
from operator import add
from random import random

from pyspark.sql import SparkSession

SAMPLES_PER_PARTITION = 10_000


def inside(_: int) -> int:
    x = random() * 2 - 1
    y = random() * 2 - 1
    return 1 if x * x + y * y <= 1 else 0


if __name__ == "__main__":
    partitions = int(sys.argv[1]) if len(sys.argv) > 1 else 2
    pause = float(sys.argv[2]) if len(sys.argv) > 2 else 1.0
    spark = SparkSession.builder.appName("SlowPi").getOrCreate()

    def count(samples):
        time.sleep(pause)
        return [sum(inside(s) for s in samples)]

    n = SAMPLES_PER_PARTITION * partitions
    hits = (
        spark.sparkContext.parallelize(range(n), partitions)
        .mapPartitions(count)
        .reduce(add)
    )
    print("Pi is roughly %f" % (4.0 * hits / n))
    spark.stop()

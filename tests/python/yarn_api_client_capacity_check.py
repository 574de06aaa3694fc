"""Runs yarn-api-client (unchanged, as tools embed it) against a Weft ResourceManager that runs
the Capacity Scheduler: its scheduler calls find the queues and their default partition.

Usage: yarn_api_client_capacity_check.py <rm url>

The RM must run the queues root.shared (50%, two users' apps using 6144 of 8192 MB) and
root.other (50%, idle). Every check prints one line; the first failure raises and exits
non-zero with a traceback. Driven by crates/cli/tests/capacity.rs.
"""

import sys

from yarn_api_client.resource_manager import ResourceManager


def check(cond, what, detail=None):
    if not cond:
        raise AssertionError(f"{what}: {detail!r}")
    print(f"ok   {what}", flush=True)


def main(url):
    rm = ResourceManager(service_endpoints=[url], timeout=15)
    sched = rm.cluster_scheduler().data["scheduler"]["schedulerInfo"]
    check(sched["type"] == "capacityScheduler", "cluster_scheduler type", sched.get("type"))
    check(sched["queueName"] == "root" and sched["capacity"] == 100.0, "the root queue", sched)

    root = rm.cluster_scheduler_queue("root")
    names = sorted(q["queueName"] for q in root["queues"]["queue"])
    check(names == ["other", "shared"], "root's children", names)

    shared = rm.cluster_scheduler_queue("shared")
    check(shared is not None and shared["queuePath"] == "root.shared", "cluster_scheduler_queue", shared)
    check(shared["type"] == "capacitySchedulerLeafQueueInfo", "a leaf's type", shared["type"])
    check(shared["capacity"] == 50.0 and shared["maxCapacity"] == 100.0, "shared's capacities", shared)
    check(shared["numApplications"] == 2, "shared's applications", shared["numApplications"])
    users = sorted(u["username"] for u in shared["users"]["user"])
    check(users == ["alice", "bob"], "shared's users", users)

    partition = rm.cluster_queue_partition(shared, "")
    check(partition is not None, "cluster_queue_partition finds the default partition", shared["capacities"])
    check(partition["absoluteUsedCapacity"] == 75.0, "absoluteUsedCapacity", partition)
    check(rm.cluster_scheduler_queue_availability(partition, 80.0), "below 80% used")
    check(not rm.cluster_scheduler_queue_availability(partition, 50.0), "above 50% used")

    other = rm.cluster_scheduler_queue("other")
    idle = rm.cluster_queue_partition(other, "")
    check(idle["absoluteUsedCapacity"] == 0.0 and other["state"] == "RUNNING", "other is idle", other)
    check(rm.cluster_scheduler_queue("nosuch") is None, "an unknown queue is None")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])

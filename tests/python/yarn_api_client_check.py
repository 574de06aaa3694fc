"""Runs yarn-api-client (unchanged, as tools embed it) against a Weft ResourceManager.

Usage: yarn_api_client_check.py <rm url> <scratch dir>

The RM must have one RUNNING node of 4096 MB and the queues root.default, root.prod, root.dev
and root.plan (a reservable queue, `<reservation/>`: a plan of a quarter of the node), with no
applications yet. Every check prints one line; the first failure raises and exits non-zero
with a traceback. Driven by crates/cli/tests/yarn_api_client.rs.
"""

import os
import sys
import time

from yarn_api_client.auth import SimpleAuth
from yarn_api_client.errors import APIError
from yarn_api_client.resource_manager import ResourceManager


def check(cond, what, detail=None):
    if not cond:
        raise AssertionError(f"{what}: {detail!r}")
    print(f"ok   {what}", flush=True)


def wait(what, probe, timeout=60.0):
    """Polls probe() until it returns a truthy value, at most `timeout` seconds."""
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        last = probe()
        if last:
            return last
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}; last: {last!r}")


def api_error(call, status):
    """Runs call(), which must raise APIError naming `status`; returns the message."""
    try:
        call()
    except APIError as e:
        msg = str(e)
        check(f"status: {status}" in msg and "RemoteException" in msg, f"APIError {status}", msg)
        return msg
    raise AssertionError(f"expected an APIError with status {status}")


def main(url, scratch):
    rm = ResourceManager(service_endpoints=[url], timeout=15)
    check(rm.get_active_endpoint().startswith("http://127.0.0.1:"), "active endpoint", rm.get_active_endpoint())

    info = rm.cluster_information().data["clusterInfo"]
    check(info["haState"] == "ACTIVE" and info["state"] == "STARTED", "cluster_information", info)
    cluster_ts = info["id"]

    metrics = rm.cluster_metrics().data["clusterMetrics"]
    check(metrics["activeNodes"] == 1 and metrics["totalMB"] == 4096, "cluster_metrics", metrics)
    check(metrics["appsSubmitted"] == 0, "no apps yet", metrics)

    sched = rm.cluster_scheduler().data["scheduler"]["schedulerInfo"]
    check(sched["type"] == "fairScheduler", "cluster_scheduler type", sched.get("type"))
    root = sched["rootQueue"]
    children = {q["queueName"]: q for q in root["childQueues"]["queue"]}
    check({"root.default", "root.prod", "root.dev", "root.plan"} <= set(children), "cluster_scheduler queues",
          sorted(children))
    leaves = [children[q] for q in ("root.default", "root.prod", "root.dev")]
    check(all(q["type"] == "fairSchedulerLeafQueueInfo" for q in leaves), "leaf types", leaves)

    nodes = rm.cluster_nodes().data["nodes"]["node"]
    check(len(nodes) == 1 and nodes[0]["state"] == "RUNNING", "cluster_nodes", nodes)
    node_id = nodes[0]["id"]
    running = rm.cluster_nodes(states=["RUNNING"]).data["nodes"]["node"]
    check([n["id"] for n in running] == [node_id], "cluster_nodes(states)", running)
    node = rm.cluster_node(node_id).data["node"]
    check(node["id"] == node_id and node["totalResource"]["memory"] == 4096, "cluster_node", node)
    api_error(lambda: rm.cluster_node("nosuch:1"), 404)

    # new-application (empty body) and a submission with the whole launch context.
    new = rm.cluster_new_application().data
    app_id = new["application-id"]
    check(app_id.startswith(f"application_{cluster_ts}_"), "cluster_new_application", new)
    check(new["maximum-resource-capability"]["memory"] > 0, "maximum capability", new)
    marker = os.path.join(scratch, "yac-marker.txt")
    script = os.path.join(scratch, "yac.sh")
    with open(script, "w") as f:
        f.write('echo "$GREETING" > "$MARKER"\nexec sleep 300\n')
    submission = {
        "application-id": app_id,
        "application-name": "yarn-api-client",
        "queue": "root.default",
        "am-container-spec": {
            "local-resources": {"entry": [{"key": "yac.sh", "value": {
                "resource": "file://" + script, "type": "FILE", "visibility": "APPLICATION",
                "size": os.path.getsize(script), "timestamp": int(os.path.getmtime(script) * 1000)}}]},
            "environment": {"entry": [{"key": "GREETING", "value": "hello-weft"},
                                      {"key": "MARKER", "value": marker}]},
            "commands": {"command": "bash yac.sh"},
        },
        "max-app-attempts": 1,
        "resource": {"memory": 256, "vCores": 1},
        "application-type": "PYTHON",
        "application-tags": {"tag": "smoke"},
    }
    check(rm.cluster_submit_application(submission).data == {}, "cluster_submit_application (202, empty body)")
    wait("the AM to run the localized script", lambda: os.path.exists(marker) and open(marker).read().strip() == "hello-weft")
    print("ok   the AM ran with its environment and local resource", flush=True)

    app = rm.cluster_application(app_id).data["app"]
    check(app["id"] == app_id and app["name"] == "yarn-api-client", "cluster_application", app)
    check(app["applicationType"] == "PYTHON" and app["applicationTags"] == "smoke", "type and tags", app)
    check(app["queue"] == "root.default" and app["state"] == "ACCEPTED", "queue and state", app)

    apps = rm.cluster_applications(states=["ACCEPTED", "RUNNING"], application_types=["python"],
                                   queue="root.default", limit=5).data["apps"]["app"]
    check([a["id"] for a in apps] == [app_id], "cluster_applications(filters)", apps)
    none = rm.cluster_applications(states=["FINISHED"]).data["apps"]["app"]
    check(none == [], "cluster_applications(FINISHED) is empty", none)
    tagged = rm.cluster_applications(application_tags=["smoke"], started_time_begin="0").data["apps"]["app"]
    check(len(tagged) == 1, "cluster_applications(tags, time)", tagged)
    api_error(lambda: rm.cluster_applications(limit="0"), 400)

    stats = rm.cluster_application_statistics(states=["ACCEPTED"], application_types=["PYTHON"]).data
    check(stats["appStatInfo"]["statItem"] == [{"state": "ACCEPTED", "type": "python", "count": 1}],
          "cluster_application_statistics", stats)
    api_error(lambda: rm.cluster_application_statistics(application_types=["a", "b"]), 400)

    attempts = rm.cluster_application_attempts(app_id).data["appAttempts"]["appAttempt"]
    check(len(attempts) == 1 and attempts[0]["id"] == 1, "cluster_application_attempts", attempts)
    attempt_id = attempts[0]["appAttemptId"]
    check(attempts[0]["nodeId"] == node_id, "attempt node", attempts[0])
    attempt = rm.cluster_application_attempt_info(app_id, attempt_id).data["appAttempt"]
    check(attempt["appAttemptId"] == attempt_id, "cluster_application_attempt_info", attempt)
    containers = rm.cluster_application_attempt_containers(app_id, attempt_id).data["containers"]["container"]
    check(len(containers) == 1 and containers[0]["containerId"] == attempt["amContainerId"],
          "cluster_application_attempt_containers", containers)
    one = rm.cluster_application_attempt_container_info(app_id, attempt_id, containers[0]["containerId"]).data
    check(one["container"]["allocatedMB"] == 256, "cluster_application_attempt_container_info", one)

    check(rm.cluster_application_state(app_id).data == {"state": "ACCEPTED"}, "cluster_application_state")
    check(rm.cluster_get_application_queue(app_id).data == {"queue": "root.default"}, "cluster_get_application_queue")
    moved = rm.cluster_change_application_queue(app_id, "prod").data
    check(moved == {"queue": "root.prod"}, "cluster_change_application_queue", moved)
    api_error(lambda: rm.cluster_change_application_queue(app_id, "root.nosuch"), 400)
    check(rm.cluster_get_application_queue(app_id).data == {"queue": "root.prod"}, "queue unchanged by the refused move")
    check(rm.cluster_get_application_priority(app_id).data == {"priority": 0}, "cluster_get_application_priority")
    timeouts = rm.cluster_application_timeouts(app_id).data["timeouts"]["timeout"]
    check(timeouts[0]["type"] == "LIFETIME" and timeouts[0]["remainingTimeInSeconds"] == -1,
          "cluster_application_timeouts", timeouts)
    lifetime = rm.cluster_application_timeout(app_id, "LIFETIME").data["timeout"]
    check(lifetime["expiryTime"] == "UNLIMITED", "cluster_application_timeout", lifetime)

    killed = rm.cluster_application_kill(app_id).data
    check(killed == {"state": "KILLED"}, "cluster_application_kill", killed)
    check(rm.cluster_application_state(app_id).data == {"state": "KILLED"}, "state after kill")
    check(rm.cluster_application(app_id).data["app"]["finalStatus"] == "KILLED", "final status after kill")
    done = rm.cluster_application_statistics(states=["KILLED"]).data["appStatInfo"]["statItem"]
    check(done == [{"state": "KILLED", "type": "*", "count": 1}], "statistics after kill", done)
    after = rm.cluster_metrics().data["clusterMetrics"]
    check(after["appsSubmitted"] == 1 and after["appsKilled"] == 1, "metrics after kill", after)

    # Errors come back as RemoteException with Hadoop's statuses.
    api_error(lambda: rm.cluster_application(f"application_{cluster_ts}_9999"), 404)
    api_error(lambda: rm.cluster_application("application_nonsense"), 400)
    api_error(lambda: rm.cluster_new_delegation_token("someone"), 403)

    # SimpleAuth as the library's users pass it: the constructor's /cluster probe (a UI page)
    # names the user and gets the hadoop.auth cookie; later calls carry only the cookie and act
    # as that user.
    alice = ResourceManager(service_endpoints=[url], timeout=15, auth=SimpleAuth("alice"))
    check(alice.cluster_information().data["clusterInfo"]["haState"] == "ACTIVE", "SimpleAuth handshake")
    id2 = alice.cluster_new_application().data["application-id"]
    alice.cluster_submit_application({
        "application-id": id2,
        "application-name": "as-alice",
        "resource": {"memory": 128, "vCores": 1},
        "am-container-spec": {"commands": {"command": "sleep 300"}},
    })
    app2 = rm.cluster_application(id2).data["app"]
    check(app2["user"] == "alice", "submission as the SimpleAuth user", app2)
    check(alice.cluster_application_kill(id2).data == {"state": "KILLED"}, "kill as the SimpleAuth user")
    diag = rm.cluster_application(id2).data["app"]["diagnostics"]
    check("alice" in diag, "killed by alice", diag)

    reservations(rm, cluster_ts)
    print("all yarn-api-client checks passed", flush=True)


def definition(arrival, deadline, containers, memory, duration_ms, name="yac"):
    """A reservation definition as Hadoop's REST documentation writes one (R_ALL, one stage)."""
    return {
        "arrival": arrival,
        "deadline": deadline,
        "reservation-name": name,
        "reservation-requests": {
            "reservation-request-interpreter": 1,
            "reservation-request": [{
                "capability": {"memory": memory, "vCores": 1},
                "num-containers": containers,
                "min-concurrency": 1,
                "duration": duration_ms,
            }],
        },
    }


def listed(rm, reservation_id, allocations=True):
    """The reservations of root.plan the list answers for `reservation_id` (a list)."""
    data = rm.cluster_reservations(queue="plan", reservation_id=reservation_id,
                                   include_resource_allocations="true" if allocations else "false").data
    return data["reservations"]


def reserved_memory_ms(reservation):
    return sum(a["resource"]["memory"] * (a["endTime"] - a["startTime"])
               for a in reservation["resource-allocations"])


def reservations(rm, cluster_ts):
    """Hadoop's reservation API through the client's reservation calls, and an app submitted
    into the reservation with `reservation-id` (time-aware-demands spec A1-A3, A9, A10, B1)."""
    first = rm.cluster_new_reservation().data
    rid = first["reservation-id"]
    check(rid.startswith(f"reservation_{cluster_ts}_") and rid.endswith("_0001"), "cluster_new_reservation", first)
    second = rm.cluster_new_reservation().data["reservation-id"]
    check(second.endswith("_0002"), "a second new reservation id", second)

    # The RM plans on its own wall clock, the same host's. A window exactly the stage's length
    # leaves the planner one place for it: the reservation starts at `arrival`.
    now = int(time.time() * 1000)
    arrival = (now // 1000 + 3) * 1000
    deadline = arrival + 60_000
    body = {"queue": "plan", "reservation-id": rid,
            "reservation-definition": definition(arrival, deadline, 2, 256, 60_000)}
    check(rm.cluster_submit_reservation(body).data == {}, "cluster_submit_reservation (202, empty body)")
    check(rm.cluster_submit_reservation(body).data == {}, "the same submission again is accepted")
    other = dict(body, **{"reservation-definition": definition(arrival, deadline, 1, 256, 60_000)})
    msg = api_error(lambda: rm.cluster_submit_reservation(other), 400)
    check("already exists" in msg, "another definition under the same id is refused", msg)
    adhoc = dict(body, **{"queue": "dev", "reservation-id": second})
    msg = api_error(lambda: rm.cluster_submit_reservation(adhoc), 400)
    check("is not managed by reservation system" in msg, "a queue without a plan is refused", msg)

    found = listed(rm, rid)
    check(len(found) == 1 and found[0]["reservation-id"] == rid, "cluster_reservations", found)
    r = found[0]
    check(r["user"] == "dr.who", "the reservation's user (no user.name)", r["user"])
    check(reserved_memory_ms(r) == 2 * 256 * 60_000, "2 x 256 MB x 60 s reserved", r["resource-allocations"])
    starts = [a["startTime"] for a in r["resource-allocations"]]
    check(min(starts) == arrival, "the reservation starts at its arrival", starts)
    plain = listed(rm, rid, allocations=False)[0]
    check(not plain.get("resource-allocations"), "allocations left out unless asked for", plain)
    everything = rm.cluster_reservations(queue="plan").data["reservations"]
    check([x["reservation-id"] for x in everything] == [rid], "cluster_reservations(queue)", everything)

    # A feasible update replaces the allocations; an infeasible one (more than the plan's
    # 1024 MB at once) keeps them. The plan's vcores are its memory fraction of the node's 8,
    # 2, which Weft's planner also checks: two containers at a time.
    update = {"reservation-id": rid, "reservation-definition": definition(arrival, deadline, 2, 384, 60_000)}
    check(rm.cluster_update_reservation(update).data == {}, "cluster_update_reservation")
    check(reserved_memory_ms(listed(rm, rid)[0]) == 2 * 384 * 60_000, "the update's 2 x 384 MB")
    too_big = {"reservation-id": rid, "reservation-definition": definition(arrival, deadline, 2, 1024, 60_000)}
    api_error(lambda: rm.cluster_update_reservation(too_big), 400)
    check(reserved_memory_ms(listed(rm, rid)[0]) == 2 * 384 * 60_000, "a refused update changes nothing")

    # B1: once the reservation holds, an app submitted with its id runs in its queue.
    wait("the reservation to start", lambda: time.time() * 1000 >= arrival + 500, timeout=30)
    app_id = rm.cluster_new_application().data["application-id"]
    rm.cluster_submit_application({
        "application-id": app_id,
        "application-name": "in-a-reservation",
        "queue": "plan",
        "reservation-id": rid,
        "resource": {"memory": 256, "vCores": 1},
        "am-container-spec": {"commands": {"command": "sleep 300"}},
    })
    leaf = f"root.plan.{rid}"
    check(rm.cluster_get_application_queue(app_id).data == {"queue": leaf}, "the app runs in the reservation's queue")
    check(rm.cluster_application_kill(app_id).data == {"state": "KILLED"}, "the reservation's app killed")

    check(rm.cluster_delete_reservation(rid).data == {}, "cluster_delete_reservation")
    check(listed(rm, rid) == [], "the deleted reservation is not listed")
    msg = api_error(lambda: rm.cluster_delete_reservation(rid), 400)
    check("is unknown" in msg, "deleting it again is refused", msg)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])

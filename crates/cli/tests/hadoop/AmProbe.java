// A Hadoop ApplicationMaster probe for Weft's tests (wire spec §9.4 step 3, without the NM
// part): Hadoop's own AMRMClient, unmodified, against the RM that HADOOP_CONF_DIR's
// yarn-site.xml names. One class, two roles:
//
// * `AmProbe client <java> <classpath>` submits an application through YarnClient whose AM
//   command is `<java> -cp <classpath> AmProbe am`, waits for it to end and prints
//   "OK final <state> <final status>" (then "PROBE PASSED"), or "FAIL ..." and exits 1.
// * `AmProbe am` is that AM: it reads its attempt from CONTAINER_ID and runs AMRMClient as
//   that attempt's user (with simple auth the connection's user is the caller's identity; on
//   a secure Hadoop cluster the AMRMToken would carry the same name), registers, asks for 2
//   containers at priority 1, receives them with the NM token of their node, starts one with
//   NMClient (`exit 3`, on the NM and container tokens the RM sent), releases the other, sees
//   both completed (exit 3 and -100), and unregisters SUCCEEDED. Each step prints "AM OK <step> <detail>"
//   to its stdout (the container's log); a failure prints "AM FAIL ..." and unregisters FAILED.
//
// Compiled with: javac -cp '<pyspark>/jars/*' AmProbe.java
// Run with:      java -cp '<pyspark>/jars/*:<dir of the class>:$HADOOP_CONF_DIR' AmProbe client ...

import java.security.PrivilegedExceptionAction;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.yarn.api.protocolrecords.AllocateResponse;
import org.apache.hadoop.yarn.api.protocolrecords.RegisterApplicationMasterResponse;
import org.apache.hadoop.yarn.api.records.ApplicationAttemptId;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.ApplicationReport;
import org.apache.hadoop.yarn.api.records.ApplicationSubmissionContext;
import org.apache.hadoop.yarn.api.records.Container;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.ContainerLaunchContext;
import org.apache.hadoop.yarn.api.records.ContainerStatus;
import org.apache.hadoop.yarn.api.records.FinalApplicationStatus;
import org.apache.hadoop.yarn.api.records.NMToken;
import org.apache.hadoop.yarn.api.records.Priority;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.api.records.YarnApplicationState;
import org.apache.hadoop.yarn.client.api.AMRMClient;
import org.apache.hadoop.yarn.client.api.AMRMClient.ContainerRequest;
import org.apache.hadoop.yarn.client.api.NMClient;
import org.apache.hadoop.yarn.client.api.NMTokenCache;
import org.apache.hadoop.yarn.client.api.YarnClient;
import org.apache.hadoop.yarn.client.api.YarnClientApplication;
import org.apache.hadoop.yarn.conf.YarnConfiguration;

public class AmProbe {
    public static void main(String[] args) throws Exception {
        if (args.length == 3 && args[0].equals("client")) {
            client(args[1], args[2]);
        } else if (args.length == 1 && args[0].equals("am")) {
            am();
        } else {
            System.out.println("FAIL usage: AmProbe client <java> <classpath> | AmProbe am");
            System.exit(2);
        }
    }

    static void client(String java, String classpath) throws Exception {
        YarnClient yarn = YarnClient.createYarnClient();
        yarn.init(new YarnConfiguration());
        yarn.start();
        YarnClientApplication app = yarn.createApplication();
        ApplicationId id = app.getNewApplicationResponse().getApplicationId();
        ApplicationSubmissionContext ctx = app.getApplicationSubmissionContext();
        ctx.setApplicationName("amrmclient-probe");
        ctx.setQueue("default");
        ctx.setResource(Resource.newInstance(512, 1));
        ctx.setMaxAppAttempts(1);
        ctx.setApplicationType("PROBE");
        Map<String, String> env = new HashMap<>();
        env.put("HADOOP_CONF_DIR", System.getenv("HADOOP_CONF_DIR"));
        // Single quotes: the NM runs the command with bash, which must not expand the `*`.
        String command = java + " -Xmx128m -cp '" + classpath + "' AmProbe am";
        ctx.setAMContainerSpec(ContainerLaunchContext.newInstance(
            Collections.emptyMap(), env, Collections.singletonList(command), null, null, null));
        yarn.submitApplication(ctx);
        System.out.println("OK submitted " + id);

        EnumSet<YarnApplicationState> terminal =
            EnumSet.of(YarnApplicationState.FINISHED, YarnApplicationState.FAILED, YarnApplicationState.KILLED);
        long deadline = System.currentTimeMillis() + 120_000;
        ApplicationReport report = yarn.getApplicationReport(id);
        while (!terminal.contains(report.getYarnApplicationState())) {
            if (System.currentTimeMillis() > deadline) {
                System.out.println("FAIL final still " + report.getYarnApplicationState());
                System.exit(1);
            }
            Thread.sleep(250);
            report = yarn.getApplicationReport(id);
        }
        System.out.println("OK final " + report.getYarnApplicationState() + " "
            + report.getFinalApplicationStatus() + " diagnostics=" + report.getDiagnostics().replace('\n', ' '));
        yarn.stop();
        System.out.println("PROBE PASSED");
    }

    static void amOk(String step, Object detail) {
        System.out.println("AM OK " + step + " " + detail);
    }

    static void am() throws Exception {
        ContainerId self = ContainerId.fromString(System.getenv("CONTAINER_ID"));
        ApplicationAttemptId attempt = self.getApplicationAttemptId();
        amOk("attempt", attempt);
        UserGroupInformation ugi = UserGroupInformation.createRemoteUser(attempt.toString());
        ugi.doAs((PrivilegedExceptionAction<Void>) () -> {
            runAm();
            return null;
        });
    }

    static void runAm() throws Exception {
        AMRMClient<ContainerRequest> rm = AMRMClient.createAMRMClient();
        rm.init(new YarnConfiguration());
        rm.start();
        String failure = null;
        try {
            RegisterApplicationMasterResponse registered = rm.registerApplicationMaster("localhost", 0, "");
            amOk("registered", "max=" + registered.getMaximumResourceCapability() + " queue=" + registered.getQueue());

            Priority priority = Priority.newInstance(1);
            Resource size = Resource.newInstance(256, 1);
            for (int i = 0; i < 2; i++) rm.addContainerRequest(new ContainerRequest(size, null, null, priority));
            List<Container> got = new ArrayList<>();
            List<NMToken> tokens = new ArrayList<>();
            for (int poll = 0; got.size() < 2 && poll < 120; poll++) {
                AllocateResponse r = rm.allocate(0.1f);
                got.addAll(r.getAllocatedContainers());
                tokens.addAll(r.getNMTokens());
                if (got.size() < 2) Thread.sleep(250);
            }
            if (got.size() != 2) throw new IllegalStateException("allocated " + got.size() + " of 2: " + got);
            for (Container c : got) {
                if (c.getPriority().getPriority() != 1) throw new IllegalStateException("priority of " + c);
                if (!NMTokenCache.getSingleton().containsToken(c.getNodeId().toString()))
                    throw new IllegalStateException("no NM token cached for " + c.getNodeId());
                rm.removeContainerRequest(new ContainerRequest(size, null, null, priority));
            }
            amOk("allocated", "count=" + got.size() + " priority=1 nmtokens=" + tokens.size()
                + " node=" + got.get(0).getNodeId() + " token=" + got.get(0).getContainerToken().getKind());

            NMClient nm = NMClient.createNMClient();
            nm.init(new YarnConfiguration());
            nm.start();
            Container started = got.get(1);
            nm.startContainer(started, ContainerLaunchContext.newInstance(
                Collections.emptyMap(), Collections.emptyMap(), Collections.singletonList("exit 3"), null, null, null));
            amOk("started", started.getId() + " on " + started.getNodeId());

            ContainerId released = got.get(0).getId();
            rm.releaseAssignedContainer(released);
            ContainerStatus done = null, exited = null;
            for (int poll = 0; (done == null || exited == null) && poll < 240; poll++) {
                AllocateResponse r = rm.allocate(0.5f);
                if (!r.getAllocatedContainers().isEmpty())
                    throw new IllegalStateException("more containers than asked: " + r.getAllocatedContainers());
                for (ContainerStatus s : r.getCompletedContainersStatuses()) {
                    if (s.getContainerId().equals(released)) done = s;
                    if (s.getContainerId().equals(started.getId())) exited = s;
                }
                if (done == null || exited == null) Thread.sleep(250);
            }
            if (done == null) throw new IllegalStateException("no completed status for " + released);
            if (exited == null) throw new IllegalStateException("no completed status for " + started.getId());
            amOk("released", released + " state=" + done.getState() + " exit=" + done.getExitStatus());
            amOk("exited", started.getId() + " state=" + exited.getState() + " exit=" + exited.getExitStatus());
            nm.stop();
        } catch (Exception e) {
            failure = e.toString();
            System.out.println("AM FAIL " + failure);
        }
        FinalApplicationStatus status = failure == null ? FinalApplicationStatus.SUCCEEDED : FinalApplicationStatus.FAILED;
        rm.unregisterApplicationMaster(status, failure == null ? "probe done" : failure, null);
        amOk("unregistered", status);
        rm.stop();
    }
}

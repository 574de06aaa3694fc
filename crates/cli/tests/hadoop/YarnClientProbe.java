// A Hadoop YarnClient probe for Weft's tests (wire spec §9.4 step 1): Hadoop's own client
// library, unmodified, against the RM that HADOOP_CONF_DIR's yarn-site.xml names (the
// directory must be on the classpath, as Hadoop's scripts put it). Each check prints
// "OK <check> <detail>"; the first failure prints "FAIL <check> <why>" and exits 1.
//
// Compiled with: javac -cp '<pyspark>/jars/*' YarnClientProbe.java
// Run with:      java -cp '<pyspark>/jars/*:<dir of the class>:$HADOOP_CONF_DIR' YarnClientProbe

import java.io.File;
import java.io.FileOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.security.PrivilegedExceptionAction;
import java.util.Collections;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.zip.ZipEntry;
import java.util.zip.ZipOutputStream;

import org.apache.hadoop.fs.Path;

import org.apache.hadoop.io.DataOutputBuffer;
import org.apache.hadoop.io.Text;
import org.apache.hadoop.security.Credentials;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.security.token.Token;
import org.apache.hadoop.security.token.TokenIdentifier;
import org.apache.hadoop.yarn.api.records.ApplicationAttemptReport;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.ApplicationReport;
import org.apache.hadoop.yarn.api.records.ApplicationSubmissionContext;
import org.apache.hadoop.yarn.api.records.ContainerLaunchContext;
import org.apache.hadoop.yarn.api.records.ContainerReport;
import org.apache.hadoop.yarn.api.records.LocalResource;
import org.apache.hadoop.yarn.api.records.LocalResourceType;
import org.apache.hadoop.yarn.api.records.LocalResourceVisibility;
import org.apache.hadoop.yarn.api.records.URL;
import org.apache.hadoop.yarn.api.records.NodeReport;
import org.apache.hadoop.yarn.api.records.QueueInfo;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.api.records.YarnApplicationState;
import org.apache.hadoop.yarn.api.records.YarnClusterMetrics;
import org.apache.hadoop.yarn.client.api.YarnClient;
import org.apache.hadoop.yarn.client.api.YarnClientApplication;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.exceptions.ApplicationNotFoundException;

public class YarnClientProbe {
    static void ok(String check, Object detail) {
        System.out.println("OK " + check + " " + detail);
    }

    static void fail(String check, Object why) {
        System.out.println("FAIL " + check + " " + why);
        System.exit(1);
    }

    // An empty Credentials in Hadoop's token-storage format (it starts with "HDTS").
    static ByteBuffer tokenStorage() throws Exception {
        DataOutputBuffer out = new DataOutputBuffer();
        new Credentials().writeTokenStorageToStream(out);
        return ByteBuffer.wrap(out.getData(), 0, out.getLength());
    }

    static YarnClient client() {
        YarnClient c = YarnClient.createYarnClient();
        c.init(new YarnConfiguration());
        c.start();
        return c;
    }

    public static void main(String[] args) throws Exception {
        YarnConfiguration conf = new YarnConfiguration();
        ok("rm-address", conf.get(YarnConfiguration.RM_ADDRESS));
        YarnClient yarn = client();

        YarnClusterMetrics metrics = yarn.getYarnClusterMetrics();
        if (metrics.getNumNodeManagers() < 1) fail("cluster-metrics", "no NodeManagers: " + metrics.getNumNodeManagers());
        ok("cluster-metrics", "nodeManagers=" + metrics.getNumNodeManagers() + " active=" + metrics.getNumActiveNodeManagers());

        List<ApplicationReport> before = yarn.getApplications();
        ok("get-applications", "count=" + before.size());

        YarnClientApplication app = yarn.createApplication();
        ApplicationId id = app.getNewApplicationResponse().getApplicationId();
        if (!id.toString().matches("application_\\d+_\\d{4,}")) fail("create-application", "id " + id);
        Resource max = app.getNewApplicationResponse().getMaximumResourceCapability();
        if (max.getMemorySize() <= 0 || max.getVirtualCores() <= 0) fail("create-application", "maximum " + max);
        ok("create-application", id + " max=" + max);

        ApplicationId unknown = ApplicationId.newInstance(id.getClusterTimestamp(), 9999);
        try {
            yarn.getApplicationReport(unknown);
            fail("unknown-application", "no exception for " + unknown);
        } catch (ApplicationNotFoundException e) {
            ok("unknown-application", e.getClass().getName());
        }

        List<NodeReport> nodes = yarn.getNodeReports();
        if (nodes.isEmpty()) fail("cluster-nodes", "no node reports");
        NodeReport n = nodes.get(0);
        ok("cluster-nodes", "count=" + nodes.size() + " first=" + n.getNodeId() + " state=" + n.getNodeState()
            + " capability=" + n.getCapability() + " rack=" + n.getRackName());

        QueueInfo queue = yarn.getQueueInfo("default");
        if (queue == null) fail("queue-info", "null for default");
        ok("queue-info", "name=" + queue.getQueueName() + " state=" + queue.getQueueState()
            + " capacity=" + queue.getCapacity() + " max=" + queue.getMaximumCapacity());

        // An app whose AM is a plain shell command: it never registers with the RM, so the
        // attempt ends when the command exits and the app reaches a terminal state. On its way
        // it shows what the NM gave it (wire spec §9.4 step 2): its environment, a file://
        // FILE resource and a zip ARCHIVE resource under their link names, and the markers
        // expanded. The command is written for Hadoop's launch script (`\$` reaches the
        // container's shell as `$`).
        File staging = Files.createTempDirectory("probe-staging").toFile();
        File data = new File(staging, "data.txt");
        Files.write(data.toPath(), "file resource\n".getBytes(StandardCharsets.UTF_8));
        File zip = new File(staging, "conf.zip");
        try (ZipOutputStream z = new ZipOutputStream(new FileOutputStream(zip))) {
            z.putNextEntry(new ZipEntry("inner/app.conf"));
            z.write("archive resource\n".getBytes(StandardCharsets.UTF_8));
            z.closeEntry();
        }
        Map<String, LocalResource> resources = new HashMap<>();
        resources.put("data.link", LocalResource.newInstance(URL.fromPath(new Path(data.getPath())),
            LocalResourceType.FILE, LocalResourceVisibility.APPLICATION, data.length(), data.lastModified()));
        resources.put("conf.link", LocalResource.newInstance(URL.fromPath(new Path(zip.getPath())),
            LocalResourceType.ARCHIVE, LocalResourceVisibility.APPLICATION, zip.length(), zip.lastModified()));
        Map<String, String> env = new HashMap<>();
        env.put("PROBE_GREETING", "hello from YarnClient");
        env.put("PROBE_CLASSPATH", "{{PWD}}<CPS>{{PWD}}/conf.link");
        ApplicationSubmissionContext ctx = app.getApplicationSubmissionContext();
        ctx.setApplicationName("yarnclient-probe");
        ctx.setQueue("default");
        ctx.setResource(Resource.newInstance(256, 1));
        ctx.setMaxAppAttempts(1);
        ctx.setApplicationType("PROBE");
        ContainerLaunchContext am = ContainerLaunchContext.newInstance(
            resources,
            env,
            Collections.singletonList("env > <LOG_DIR>/env.txt; echo {{PWD}} > <LOG_DIR>/pwd.txt;"
                + " cat data.link > <LOG_DIR>/file.txt; cat conf.link/inner/app.conf > <LOG_DIR>/archive.txt;"
                + " test -d tmp && head -c 4 \\$HADOOP_TOKEN_FILE_LOCATION > <LOG_DIR>/tokens.txt;"
                + " echo $PROBE_GREETING; exit 0"),
            null, tokenStorage(), null);
        ctx.setAMContainerSpec(am);
        yarn.submitApplication(ctx);
        ok("submit-application", id);

        EnumSet<YarnApplicationState> terminal =
            EnumSet.of(YarnApplicationState.FINISHED, YarnApplicationState.FAILED, YarnApplicationState.KILLED);
        long deadline = System.currentTimeMillis() + 60_000;
        ApplicationReport report = yarn.getApplicationReport(id);
        while (!terminal.contains(report.getYarnApplicationState())) {
            if (System.currentTimeMillis() > deadline) fail("terminal-state", "still " + report.getYarnApplicationState());
            Thread.sleep(250);
            report = yarn.getApplicationReport(id);
        }
        ok("terminal-state", report.getYarnApplicationState() + " final=" + report.getFinalApplicationStatus()
            + " user=" + report.getUser() + " queue=" + report.getQueue() + " type=" + report.getApplicationType()
            + " attempt=" + report.getCurrentApplicationAttemptId()
            + " finished=" + (report.getFinishTime() > 0)
            + " diagnostics=" + report.getDiagnostics().replace('\n', ' '));

        List<ApplicationAttemptReport> attempts = yarn.getApplicationAttempts(id);
        if (attempts.size() != 1) fail("attempts", attempts);
        ApplicationAttemptReport attempt = attempts.get(0);
        ok("attempts", "count=1 id=" + attempt.getApplicationAttemptId() + " state="
            + attempt.getYarnApplicationAttemptState() + " am=" + attempt.getAMContainerId());
        List<ContainerReport> containers = yarn.getContainers(attempt.getApplicationAttemptId());
        ContainerReport amContainer = containers.stream()
            .filter(c -> c.getContainerId().equals(attempt.getAMContainerId()))
            .findFirst().orElse(null);
        if (amContainer == null) fail("containers", "no AM container in " + containers);
        ok("containers", "am=" + amContainer.getContainerId() + " state=" + amContainer.getContainerState()
            + " exit=" + amContainer.getContainerExitStatus() + " node=" + amContainer.getAssignedNode());

        List<ApplicationReport> after = yarn.getApplications(Collections.singleton("PROBE"));
        if (after.stream().noneMatch(r -> r.getApplicationId().equals(id))) fail("get-applications-filtered", after);
        ok("get-applications-filtered", "count=" + after.size());
        yarn.stop();

        // A caller holding a token speaks SASL first; Weft's simple-only server answers
        // "switch to simple", which Hadoop's client accepts when Kerberos is off.
        UserGroupInformation ugi = UserGroupInformation.createRemoteUser(
            UserGroupInformation.getCurrentUser().getShortUserName());
        ugi.addToken(new Token<TokenIdentifier>(new byte[] {1}, new byte[] {2},
            new Text("RM_DELEGATION_TOKEN"), new Text("weft")));
        int viaSasl = ugi.doAs((PrivilegedExceptionAction<Integer>) () -> {
            YarnClient c = client();
            int count = c.getApplications().size();
            c.stop();
            return count;
        });
        ok("sasl-fallback", "count=" + viaSasl);
        System.out.println("PROBE PASSED");
    }
}

// A Hadoop NMClient probe for Weft's tests: Hadoop's own NMClient, unmodified, starts, queries
// and stops a container on a Weft NM's ContainerManagementProtocol. The container and its
// tokens come from the test (the RM allocated the container; the token's identifier is
// Hadoop's ContainerTokenIdentifierProto, its password Weft's token text). Each check prints
// "OK <check> <detail>"; the first failure prints "FAIL <check> <why>" and exits 1.
//
// Args: <nm host:port> <container id> <token identifier hex> <token password>
//       <memory MB> <vcores> <marker file>

import java.nio.charset.StandardCharsets;
import java.util.Collections;
import java.util.List;

import org.apache.hadoop.yarn.api.records.Container;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.ContainerLaunchContext;
import org.apache.hadoop.yarn.api.records.ContainerState;
import org.apache.hadoop.yarn.api.records.ContainerStatus;
import org.apache.hadoop.yarn.api.records.NodeId;
import org.apache.hadoop.yarn.api.records.Priority;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.api.records.Token;
import org.apache.hadoop.yarn.client.api.NMClient;
import org.apache.hadoop.yarn.client.api.NMTokenCache;
import org.apache.hadoop.yarn.conf.YarnConfiguration;

public class NmClientProbe {
    static void ok(String check, Object detail) {
        System.out.println("OK " + check + " " + detail);
    }

    static void fail(String check, Object why) {
        System.out.println("FAIL " + check + " " + why);
        System.exit(1);
    }

    static byte[] unhex(String hex) {
        byte[] out = new byte[hex.length() / 2];
        for (int i = 0; i < out.length; i++) {
            out[i] = (byte) Integer.parseInt(hex.substring(2 * i, 2 * i + 2), 16);
        }
        return out;
    }

    static Container container(ContainerId id, NodeId node, Resource size, byte[] identifier, String password) {
        Token token = Token.newInstance(identifier, "ContainerToken",
            password.getBytes(StandardCharsets.UTF_8), node.toString());
        return Container.newInstance(id, node, node.getHost() + ":0", size, Priority.newInstance(1), token);
    }

    public static void main(String[] a) throws Exception {
        String address = a[0];
        int colon = address.lastIndexOf(':');
        NodeId node = NodeId.newInstance(address.substring(0, colon), Integer.parseInt(address.substring(colon + 1)));
        ContainerId id = ContainerId.fromString(a[1]);
        byte[] identifier = unhex(a[2]);
        String password = a[3];
        Resource size = Resource.newInstance(Long.parseLong(a[4]), Integer.parseInt(a[5]));
        String marker = a[6];

        // NMClient refuses a node without an NMToken; Weft's NM authorizes by the attempt
        // NMClient connects as, so the token only has to exist.
        NMTokenCache tokens = new NMTokenCache();
        tokens.setToken(node.toString(), Token.newInstance(new byte[] {1}, "NMToken", new byte[] {2}, node.toString()));
        NMClient nm = NMClient.createNMClient();
        nm.setNMTokenCache(tokens);
        nm.init(new YarnConfiguration());
        nm.start();

        ContainerLaunchContext ctx = ContainerLaunchContext.newInstance(
            Collections.emptyMap(),
            Collections.singletonMap("PROBE_WORD", "started-by-nmclient"),
            List.of("echo $PROBE_WORD > " + marker + "; exec sleep 300"),
            null, null, null);

        // A forged password: the NM refuses that container, and NMClient throws what it sent.
        String forged = password.substring(0, password.length() - 1)
            + (password.endsWith("0") ? "1" : "0");
        try {
            nm.startContainer(container(id, node, size, identifier, forged), ctx);
            fail("forged-token", "started");
        } catch (Exception e) {
            ok("forged-token", e.getClass().getName() + ": " + e.getMessage().replace('\n', ' '));
        }

        nm.startContainer(container(id, node, size, identifier, password), ctx);
        ok("start-container", id);
        ContainerStatus running = nm.getContainerStatus(id, node);
        if (running.getState() != ContainerState.RUNNING) fail("status", running);
        ok("status", "state=" + running.getState() + " capability=" + running.getCapability());

        // RUNNING means launched, not that the command got as far as its echo (a loaded machine
        // can take seconds): wait for the marker so the stop cannot beat the write.
        java.io.File written = new java.io.File(marker);
        long writeDeadline = System.currentTimeMillis() + 60_000;
        while (!written.isFile() || written.length() == 0) {
            if (System.currentTimeMillis() > writeDeadline) fail("marker", "never written: " + marker);
            Thread.sleep(100);
        }

        nm.stopContainer(id, node);
        long deadline = System.currentTimeMillis() + 30_000;
        ContainerStatus done = nm.getContainerStatus(id, node);
        while (done.getState() != ContainerState.COMPLETE) {
            if (System.currentTimeMillis() > deadline) fail("stop-container", "still " + done.getState());
            Thread.sleep(100);
            done = nm.getContainerStatus(id, node);
        }
        ok("stop-container", "state=" + done.getState() + " exit=" + done.getExitStatus());
        nm.stop();
        System.out.println("PROBE PASSED");
    }
}

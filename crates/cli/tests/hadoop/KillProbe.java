// Kills an application with Hadoop's own YarnClient (forceKillApplication), as `yarn
// application -kill` does, against the RM that HADOOP_CONF_DIR's yarn-site.xml names (the
// directory must be on the classpath). killApplication returns once the RM reports the app
// KILLED (it polls the report); prints "KILLED <app> state=<state>" then.
//
// Compiled with: javac -cp '<pyspark>/jars/*' KillProbe.java
// Run with:      java -cp '<pyspark>/jars/*:<dir of the class>:$HADOOP_CONF_DIR' KillProbe <app id>

import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.client.api.YarnClient;
import org.apache.hadoop.yarn.conf.YarnConfiguration;

public class KillProbe {
    public static void main(String[] args) throws Exception {
        ApplicationId app = ApplicationId.fromString(args[0]);
        YarnClient client = YarnClient.createYarnClient();
        client.init(new YarnConfiguration());
        client.start();
        try {
            client.killApplication(app);
            System.out.println("KILLED " + app + " state="
                + client.getApplicationReport(app).getYarnApplicationState());
        } finally {
            client.stop();
        }
    }
}

// Prints the protobuf descriptors compiled into Hadoop's client jar (message names, field
// numbers, types, labels, defaults), the source of the numbering in Weft's Hadoop .proto files.
// Run: javac -cp "<pyspark>/jars/*" DumpDescriptors.java &&
//      java -cp "<pyspark>/jars/*:." DumpDescriptors org.apache.hadoop.yarn.proto.YarnProtos ...
// (RpcHeaderProtos, IpcConnectionContextProtos in org.apache.hadoop.ipc.protobuf; SecurityProtos
// in org.apache.hadoop.security.proto; YarnProtos, YarnServiceProtos, YarnSecurityTokenProtos in
// org.apache.hadoop.yarn.proto).
import org.apache.hadoop.thirdparty.protobuf.Descriptors.*;
public class DumpDescriptors {
  public static void main(String[] a) throws Exception {
    for (String cls : a) {
      FileDescriptor fd = (FileDescriptor) Class.forName(cls).getMethod("getDescriptor").invoke(null);
      System.out.println("=== " + fd.getName() + " package " + fd.getPackage());
      for (Descriptor d : fd.getMessageTypes()) print(d, "");
      for (EnumDescriptor e : fd.getEnumTypes()) printEnum(e, "");
    }
  }
  static void printEnum(EnumDescriptor e, String ind) {
    StringBuilder sb = new StringBuilder(ind + "enum " + e.getName() + " {");
    for (EnumValueDescriptor v : e.getValues()) sb.append(" " + v.getName() + "=" + v.getNumber());
    System.out.println(sb + " }");
  }
  static void print(Descriptor d, String ind) {
    System.out.println(ind + "message " + d.getName());
    for (FieldDescriptor f : d.getFields()) {
      String t = f.getType() == FieldDescriptor.Type.MESSAGE ? f.getMessageType().getName() : f.getType() == FieldDescriptor.Type.ENUM ? f.getEnumType().getName() : f.getType().toString().toLowerCase();
      String lab = f.isRequired() ? "required" : f.isRepeated() ? "repeated" : "optional";
      String def = f.hasDefaultValue() ? " [default=" + f.getDefaultValue() + "]" : "";
      System.out.println(ind + "  " + lab + " " + t + " " + f.getName() + " = " + f.getNumber() + def);
    }
    for (Descriptor n : d.getNestedTypes()) print(n, ind + "  ");
    for (EnumDescriptor e : d.getEnumTypes()) printEnum(e, ind + "  ");
  }
}

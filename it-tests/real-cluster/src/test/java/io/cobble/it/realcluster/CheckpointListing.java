package io.cobble.it.realcluster;

import java.lang.reflect.Method;
import java.util.List;

/**
 * Prints what Cobble's {@code CheckpointReader} sees in a checkpoint: where it read it from, the
 * checkpoint id, and per Cobble operator its parallelism, subtasks with their key groups and states
 * with their serializers, after opening a read-only view of the operator. Run in a child JVM on a
 * cluster's {@code lib/} (this module keeps Flink off its class path, hence the reflection).
 */
public final class CheckpointListing {

  private CheckpointListing() {}

  public static void main(String[] args) throws Exception {
    Class<?> reader = Class.forName("io.cobble.flink.state.inspect.CheckpointReader");
    Object checkpoint = reader.getMethod("open", String.class).invoke(null, args[0]);
    StringBuilder out = new StringBuilder();
    out.append("source ").append(call(checkpoint, "source")).append('\n');
    out.append("checkpoint ").append(call(checkpoint, "checkpointId")).append('\n');
    for (Object operator : (List<?>) call(checkpoint, "operators")) {
      String id = (String) call(operator, "operatorId");
      out.append("operator ")
          .append(id)
          .append(" parallelism ")
          .append(call(operator, "parallelism"))
          .append(" max ")
          .append(call(operator, "maxParallelism"))
          .append('\n');
      for (Object subtask : (List<?>) call(operator, "subtasks")) {
        out.append("  subtask ")
            .append(call(subtask, "index"))
            .append(' ')
            .append(call(subtask, "keyGroups"))
            .append('\n');
      }
      for (Object state : (List<?>) call(operator, "states")) {
        out.append("  state ")
            .append(state)
            .append(" namespace ")
            .append(className(call(state, "namespaceSerializer")))
            .append(" value ")
            .append(className(call(state, "valueSerializer")))
            .append('\n');
      }
      Method openView = checkpoint.getClass().getMethod("openView", String.class);
      try (AutoCloseable view = (AutoCloseable) openView.invoke(checkpoint, id)) {
        out.append("  view of ").append(call(call(view, "operator"), "operatorId")).append('\n');
      }
    }
    System.out.print(out);
  }

  private static Object call(Object target, String method) throws Exception {
    return target.getClass().getMethod(method).invoke(target);
  }

  private static String className(Object o) {
    return o == null ? "-" : o.getClass().getName();
  }
}

package io.cobble.flink.state.inspect;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/** A completed checkpoint's Cobble operators, as {@link CheckpointReader} found them. */
public final class CobbleCheckpoint {

  /** Where the reader found the Cobble state. */
  public enum Source {
    /** The sidecar files the HA wrapper keeps next to each retained checkpoint. */
    SIDECARS,
    /** Flink's {@code _metadata} (no sidecars). */
    METADATA
  }

  private final long checkpointId;
  private final String location;
  private final List<CobbleOperator> operators;
  private final Source source;

  CobbleCheckpoint(
      long checkpointId, String location, List<CobbleOperator> operators, Source source) {
    this.checkpointId = checkpointId;
    this.location = location;
    this.operators = Collections.unmodifiableList(new ArrayList<>(operators));
    this.source = source;
  }

  public Source source() {
    return source;
  }

  public long checkpointId() {
    return checkpointId;
  }

  /** The checkpoint directory that was read. */
  public String location() {
    return location;
  }

  /** The operators with keyed state on the Cobble backend. */
  public List<CobbleOperator> operators() {
    return operators;
  }

  /** The operator with id {@code operatorId} (hex, as Flink prints it). */
  public CobbleOperator operator(String operatorId) {
    for (CobbleOperator op : operators) {
      if (op.operatorId().equalsIgnoreCase(operatorId)) {
        return op;
      }
    }
    List<String> known = new ArrayList<>();
    for (CobbleOperator op : operators) {
      known.add(op.operatorId());
    }
    throw new IllegalArgumentException(
        "checkpoint "
            + checkpointId
            + " at "
            + location
            + " has no Cobble operator "
            + operatorId
            + "; its Cobble operators are "
            + known);
  }

  /**
   * Opens a read-only view of one operator's state, staged in a new directory under the system's
   * temporary directory; close it to remove that directory.
   */
  public OperatorStateView openView(String operatorId) throws IOException {
    return OperatorStateView.open(
        operator(operatorId), Files.createTempDirectory("cobble-inspect-"));
  }

  /** As {@link #openView(String)}, staging in a new directory under {@code stagingParent}. */
  public OperatorStateView openView(String operatorId, Path stagingParent) throws IOException {
    CobbleOperator op = operator(operatorId);
    Files.createDirectories(stagingParent);
    return OperatorStateView.open(op, Files.createTempDirectory(stagingParent, "cobble-inspect-"));
  }
}

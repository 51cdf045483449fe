package io.cobble.it.cluster;

import java.util.Collections;
import java.util.List;
import java.util.Optional;

/** The rows of a statement run through the SQL Gateway. */
public final class StatementResult {

  private final String statement;
  private final String resultKind;
  private final List<String> columns;
  private final List<List<Object>> rows;
  private final String jobId;
  private final List<String> rowKinds;

  StatementResult(
      String statement,
      String resultKind,
      List<String> columns,
      List<List<Object>> rows,
      List<String> rowKinds,
      String jobId) {
    this.statement = statement;
    this.resultKind = resultKind;
    this.columns = Collections.unmodifiableList(columns);
    this.rows = Collections.unmodifiableList(rows);
    this.rowKinds = Collections.unmodifiableList(rowKinds);
    this.jobId = jobId;
  }

  /**
   * The change kind of each row ({@code INSERT}, {@code UPDATE_BEFORE}, {@code UPDATE_AFTER},
   * {@code DELETE}); a streaming aggregate returns a changelog.
   */
  public List<String> rowKinds() {
    return rowKinds;
  }

  public String statement() {
    return statement;
  }

  /** {@code SUCCESS} or {@code SUCCESS_WITH_CONTENT}; may be null on old gateways. */
  public String resultKind() {
    return resultKind;
  }

  public List<String> columns() {
    return columns;
  }

  /** Field values as JSON types (String, Number, Boolean, null, or nested lists/maps). */
  public List<List<Object>> rows() {
    return rows;
  }

  /** The Flink job the statement submitted (INSERT, or a query), if any. */
  public Optional<String> jobId() {
    return Optional.ofNullable(jobId);
  }

  @Override
  public String toString() {
    return "StatementResult{" + columns + ", " + rows.size() + " rows, job " + jobId + "}";
  }
}

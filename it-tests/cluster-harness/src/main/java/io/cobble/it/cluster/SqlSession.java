package io.cobble.it.cluster;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A SQL Gateway session (REST API v1/v2): statements run one at a time, results are fetched as JSON
 * rows by following {@code nextResultUri} until {@code EOS}.
 */
public final class SqlSession implements AutoCloseable {

  /** How long {@link #execute(String)} waits for a statement's results by default. */
  public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(120);

  private final RestJson rest;
  private final String baseUrl;
  private final String handle;

  private SqlSession(RestJson rest, String baseUrl, String handle) {
    this.rest = rest;
    this.baseUrl = baseUrl;
    this.handle = handle;
  }

  static SqlSession open(RestJson rest, String baseUrl, Map<String, String> properties) {
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("properties", properties);
    try {
      RestJson.Response response = rest.post(baseUrl + "/v1/sessions", body);
      if (!response.ok()) {
        throw new SqlGatewayException("<open session>", response.errors());
      }
      return new SqlSession(rest, baseUrl, response.body.path("sessionHandle").asText());
    } catch (IOException e) {
      throw new UncheckedIOException("cannot open a SQL Gateway session at " + baseUrl, e);
    }
  }

  public String handle() {
    return handle;
  }

  /** Runs one statement and returns all its rows; throws {@link SqlGatewayException} on error. */
  public StatementResult execute(String statement) {
    return execute(statement, DEFAULT_TIMEOUT);
  }

  /** Runs one statement, waiting at most {@code timeout} for all of its results. */
  public StatementResult execute(String statement, Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    try {
      Map<String, Object> body = new LinkedHashMap<>();
      body.put("statement", statement);
      RestJson.Response submitted =
          rest.post(baseUrl + "/v1/sessions/" + handle + "/statements", body);
      if (!submitted.ok()) {
        throw new SqlGatewayException(statement, submitted.errors());
      }
      String operation = submitted.body.path("operationHandle").asText();
      String next =
          "/v2/sessions/" + handle + "/operations/" + operation + "/result/0?rowFormat=JSON";
      List<String> columns = new ArrayList<>();
      List<List<Object>> rows = new ArrayList<>();
      List<String> kinds = new ArrayList<>();
      String jobId = null;
      String resultKind = null;
      while (next != null) {
        if (System.nanoTime() > deadline) {
          cancel(operation);
          throw new SqlGatewayException(
              statement, "no end of results within " + timeout + " (operation " + operation + ")");
        }
        RestJson.Response page = rest.get(baseUrl + next);
        if (!page.ok()) {
          throw new SqlGatewayException(statement, page.errors());
        }
        JsonNode json = page.body;
        String type = json.path("resultType").asText();
        if (json.hasNonNull("jobID")) {
          jobId = json.get("jobID").asText();
        }
        if (json.hasNonNull("resultKind")) {
          resultKind = json.get("resultKind").asText();
        }
        JsonNode results = json.path("results");
        if (columns.isEmpty() && results.path("columns").isArray()) {
          results.path("columns").forEach(c -> columns.add(c.path("name").asText()));
        }
        for (JsonNode row : results.path("data")) {
          List<Object> fields = new ArrayList<>();
          Iterator<JsonNode> it = row.path("fields").elements();
          while (it.hasNext()) {
            fields.add(RestJson.MAPPER.treeToValue(it.next(), Object.class));
          }
          rows.add(fields);
          kinds.add(row.path("kind").asText("INSERT"));
        }
        if ("EOS".equals(type)) {
          next = null;
        } else {
          next = json.hasNonNull("nextResultUri") ? json.get("nextResultUri").asText() : null;
          if ("NOT_READY".equals(type)) {
            sleep(200);
          }
        }
      }
      if (jobId == null && columns.size() == 1 && "job id".equalsIgnoreCase(columns.get(0))) {
        jobId = rows.isEmpty() ? null : String.valueOf(rows.get(0).get(0));
      }
      closeOperation(operation);
      return new StatementResult(statement, resultKind, columns, rows, kinds, jobId);
    } catch (IOException e) {
      throw new UncheckedIOException(
          "SQL Gateway call failed for: " + SecretMasking.maskOptions(statement), e);
    }
  }

  private void cancel(String operation) {
    try {
      rest.post(
          baseUrl + "/v1/sessions/" + handle + "/operations/" + operation + "/cancel", Map.of());
    } catch (IOException | RuntimeException ignored) {
      // best effort
    }
  }

  private void closeOperation(String operation) {
    try {
      rest.delete(baseUrl + "/v1/sessions/" + handle + "/operations/" + operation + "/close");
    } catch (IOException | RuntimeException ignored) {
      // best effort
    }
  }

  private static void sleep(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted", e);
    }
  }

  @Override
  public void close() {
    try {
      rest.delete(baseUrl + "/v1/sessions/" + handle);
    } catch (IOException | RuntimeException ignored) {
      // the gateway may already be gone
    }
  }
}

package io.cobble.it.cluster;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

/** A minimal JSON-over-HTTP client for Flink's REST endpoints. */
final class RestJson {

  static final ObjectMapper MAPPER = new ObjectMapper();

  private final HttpClient client =
      HttpClient.newBuilder()
          .connectTimeout(Duration.ofSeconds(5))
          .version(HttpClient.Version.HTTP_1_1)
          .build();

  /** A response: HTTP status and parsed body (an empty object when not JSON). */
  static final class Response {
    final int status;
    final JsonNode body;
    final String text;

    Response(int status, JsonNode body, String text) {
      this.status = status;
      this.body = body;
      this.text = text;
    }

    boolean ok() {
      return status / 100 == 2;
    }

    /** The joined {@code errors} array of a Flink REST error response, else the raw text. */
    String errors() {
      JsonNode errors = body.path("errors");
      if (errors.isArray() && errors.size() > 0) {
        StringBuilder text = new StringBuilder();
        errors.forEach(e -> text.append(e.asText()).append('\n'));
        return text.toString();
      }
      return this.text;
    }
  }

  Response get(String url) throws IOException {
    return send(HttpRequest.newBuilder(URI.create(url)).GET());
  }

  Response delete(String url) throws IOException {
    return send(HttpRequest.newBuilder(URI.create(url)).DELETE());
  }

  Response post(String url, Object body) throws IOException {
    String json = MAPPER.writeValueAsString(body);
    return send(
        HttpRequest.newBuilder(URI.create(url))
            .header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString(json)));
  }

  private Response send(HttpRequest.Builder request) throws IOException {
    try {
      HttpResponse<String> response =
          client.send(
              request.timeout(Duration.ofSeconds(60)).build(),
              HttpResponse.BodyHandlers.ofString());
      String text = response.body() == null ? "" : response.body();
      JsonNode body;
      try {
        body = text.isEmpty() ? MAPPER.createObjectNode() : MAPPER.readTree(text);
      } catch (IOException notJson) {
        body = MAPPER.createObjectNode();
      }
      return new Response(response.statusCode(), body, text);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException("interrupted", e);
    }
  }
}

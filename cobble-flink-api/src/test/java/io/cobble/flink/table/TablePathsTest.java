package io.cobble.flink.table;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URI;
import java.nio.file.Paths;
import org.apache.flink.table.api.ValidationException;
import org.junit.jupiter.api.Test;

class TablePathsTest {

  @Test
  void relativePathsBecomeAbsoluteFileUris() {
    URI uri = TablePaths.normalize("data/../tables/t1");
    assertEquals("file", uri.getScheme());
    assertEquals(Paths.get("tables/t1").toAbsolutePath().toUri(), uri);
  }

  @Test
  void urisKeepTheirScheme() {
    assertEquals(URI.create("s3://bucket/t"), TablePaths.normalize(" s3://bucket/t "));
    assertEquals(URI.create("file:///tmp/t"), TablePaths.normalize("file:///tmp/t"));
  }

  @Test
  void credentialsInTheUriAreRejectedWithoutEchoingThem() {
    ValidationException e =
        assertThrows(
            ValidationException.class, () -> TablePaths.normalize("s3://key:secret@bucket/t"));
    assertTrue(e.getMessage().contains("storage.option."), e.getMessage());
    assertFalse(e.getMessage().contains("secret@"), e.getMessage());
  }

  @Test
  void emptyPathIsRejected() {
    assertThrows(ValidationException.class, () -> TablePaths.normalize("  "));
  }
}

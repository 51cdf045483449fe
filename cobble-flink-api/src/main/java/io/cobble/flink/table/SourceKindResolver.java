package io.cobble.flink.table;

import io.cobble.flink.table.layout.TableSchemaFile;
import io.cobble.storage.Storage;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.List;
import java.util.regex.Pattern;
import org.apache.flink.table.api.ValidationException;

/**
 * Decides what {@code source.kind = 'auto'} means for a path by looking at what lies there: a
 * published sink-table schema means {@code sink}; a {@code chk-<n>} directory, or a checkpoint root
 * holding {@code chk-<n>/_metadata}, means {@code state}. It never picks {@code raw}: any Cobble
 * directory is readable raw, so choosing it silently would hide a wrong path.
 */
final class SourceKindResolver {

  private static final Pattern CHECKPOINT_DIR = Pattern.compile("chk-\\d+");
  private static final Pattern CHECKPOINT_METADATA = Pattern.compile("chk-\\d+/_metadata");

  private SourceKindResolver() {}

  static SourceKind resolve(TableStorage table) {
    try (Storage storage = table.open()) {
      // A sink table is checked first: it is one small file, whereas finding checkpoints lists.
      if (storage.exists(TableSchemaFile.PATH)) {
        return SourceKind.SINK;
      }
      if (isCheckpointDirectory(table) || hasCheckpoints(storage.list(""))) {
        return SourceKind.STATE;
      }
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot inspect the Cobble source path " + table.root(), e);
    }
    String kindKey = CobbleSourceOptions.SOURCE_KIND.key();
    throw new ValidationException(
        "Option '"
            + kindKey
            + "' = 'auto' cannot decide what '"
            + table.root()
            + "' holds: it has no Cobble sink table schema ("
            + TableSchemaFile.PATH
            + ") and no Flink checkpoint (chk-<n>). Set '"
            + kindKey
            + "' to 'sink', 'state', or 'raw' to read any Cobble table as bytes (auto never"
            + " selects raw).");
  }

  private static boolean isCheckpointDirectory(TableStorage table) {
    String path = table.root().getPath();
    if (path == null) {
      return false;
    }
    String trimmed = path.endsWith("/") ? path.substring(0, path.length() - 1) : path;
    return CHECKPOINT_DIR.matcher(trimmed.substring(trimmed.lastIndexOf('/') + 1)).matches();
  }

  private static boolean hasCheckpoints(List<String> files) {
    return files.stream().anyMatch(file -> CHECKPOINT_METADATA.matcher(file).matches());
  }
}

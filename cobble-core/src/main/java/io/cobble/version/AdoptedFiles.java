package io.cobble.version;

import io.cobble.sst.TableProperties;
import io.cobble.vlog.ValueLogFile;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * Files of other shards' snapshots that a live Db takes over in place when it expands its buckets:
 * tables by the source they come from (the level order within one source matters, not across
 * sources, whose buckets are disjoint) and the value logs those tables point into.
 */
public final class AdoptedFiles {
  /** A table as the source snapshot lists it; the Db gives it a new number and a level. */
  public static final class TableFile {
    final int source;
    final int family;
    final int level;
    final long size;
    final TableProperties properties;
    final String volumePath;

    public TableFile(
        int source,
        int family,
        int level,
        long size,
        TableProperties properties,
        String volumePath) {
      this.source = source;
      this.family = family;
      this.level = level;
      this.size = size;
      this.properties = properties;
      this.volumePath = volumePath;
    }

    public int source() {
      return source;
    }

    public int family() {
      return family;
    }

    public int level() {
      return level;
    }

    public long size() {
      return size;
    }

    public TableProperties properties() {
      return properties;
    }

    public String volumePath() {
      return volumePath;
    }
  }

  /** A value log, which keeps its number since rows point into it by number. */
  public static final class LogFile {
    final ValueLogFile file;
    final String volumePath;

    public LogFile(ValueLogFile file, String volumePath) {
      this.file = file;
      this.volumePath = volumePath;
    }

    public ValueLogFile file() {
      return file;
    }

    public String volumePath() {
      return volumePath;
    }
  }

  private final List<TableFile> tables;
  private final List<LogFile> logs;

  public AdoptedFiles(List<TableFile> tables, List<LogFile> logs) {
    this.tables = Collections.unmodifiableList(new ArrayList<>(tables));
    this.logs = Collections.unmodifiableList(new ArrayList<>(logs));
  }

  public List<TableFile> tables() {
    return tables;
  }

  public List<LogFile> logs() {
    return logs;
  }

  /** Every volume path, for the export lease that keeps them alive. */
  public List<String> volumePaths() {
    List<String> out = new ArrayList<>();
    tables.forEach(t -> out.add(t.volumePath));
    logs.forEach(l -> out.add(l.volumePath));
    return out;
  }
}

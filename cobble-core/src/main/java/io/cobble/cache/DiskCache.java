package io.cobble.cache;

import io.cobble.CobbleException;
import io.cobble.storage.MetadataFile;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;

/**
 * Local copies of a remote volume's immutable data files on a CACHE volume, bounded by bytes with
 * least-recently-used eviction. An entry is either a whole file (one the writer produced and
 * uploaded, kept write-through) or one aligned chunk of a file read from remote. Every entry is
 * written to a temporary name and renamed, so an entry is whole or absent; bit rot inside one is
 * caught by the block and record checksums of the readers, which then {@link #drop} it and read the
 * remote copy.
 *
 * <p>Nothing here is needed for correctness: the cache directory may be wiped at any time. An
 * {@code ORIGIN} file names the remote volume the entries came from; a cache found holding another
 * volume's entries is emptied at open.
 */
public final class DiskCache {
  private static final String ORIGIN = "ORIGIN";
  private static final String FILES = "files";
  private static final String CHUNKS = "chunks";
  private static final String TMP = ".tmp";

  private final Path root;
  private final Path files;
  private final Path chunks;
  private final long budget;
  private final int chunkSize;
  // Entry key ("f:" + encoded path, or "c:" + encoded path + "." + chunk) to its bytes; access
  // order, eldest first. Guarded by this.
  private final LinkedHashMap<String, Long> entries = new LinkedHashMap<>(64, 0.75f, true);
  private long used;
  private final AtomicLong hits = new AtomicLong();
  private final AtomicLong fetchedChunks = new AtomicLong();

  private DiskCache(Path root, long budget, int chunkSize) {
    this.root = root;
    this.files = root.resolve(FILES);
    this.chunks = root.resolve(CHUNKS);
    this.budget = budget;
    this.chunkSize = chunkSize;
  }

  /**
   * Opens the cache in {@code root} for files of the remote volume {@code origin}, keeping what a
   * previous run left there when it came from the same volume.
   */
  public static DiskCache open(Path root, String origin, long budget, int chunkSize) {
    DiskCache cache = new DiskCache(root, budget, chunkSize);
    try {
      Files.createDirectories(root);
      Path originFile = root.resolve(ORIGIN);
      Optional<byte[]> recorded = Optional.empty();
      if (Files.exists(originFile)) {
        recorded = MetadataFile.decode(Files.readAllBytes(originFile));
      }
      byte[] wanted = origin.getBytes(StandardCharsets.UTF_8);
      if (recorded.isEmpty() || !Arrays.equals(recorded.get(), wanted)) {
        deleteTree(cache.files);
        deleteTree(cache.chunks);
        Files.write(originFile, MetadataFile.encode(wanted));
      }
      Files.createDirectories(cache.files);
      Files.createDirectories(cache.chunks);
      cache.load();
    } catch (IOException e) {
      throw new CobbleException("cannot open the remote-file cache in " + root, e);
    }
    return cache;
  }

  /** Registers the entries a previous run left, oldest first, dropping unfinished ones. */
  private void load() throws IOException {
    List<Path> found = new ArrayList<>();
    for (Path dir : List.of(files, chunks)) {
      try (Stream<Path> s = Files.list(dir)) {
        s.forEach(found::add);
      }
    }
    found.sort(Comparator.comparingLong(DiskCache::modified));
    synchronized (this) {
      for (Path p : found) {
        String name = p.getFileName().toString();
        if (name.endsWith(TMP)) {
          Files.deleteIfExists(p);
          continue;
        }
        String key = (p.getParent().equals(files) ? "f:" : "c:") + name;
        long size = Files.size(p);
        entries.put(key, size);
        used += size;
      }
      evict();
    }
  }

  private static long modified(Path p) {
    try {
      return Files.getLastModifiedTime(p).toMillis();
    } catch (IOException e) {
      return 0;
    }
  }

  public int chunkSize() {
    return chunkSize;
  }

  /** The local copy of the whole file at {@code path}, if cached. */
  public Path wholeFile(String path) {
    String name = encode(path);
    synchronized (this) {
      if (entries.get("f:" + name) == null) {
        return null;
      }
    }
    return files.resolve(name);
  }

  /**
   * Keeps {@code local}, a complete copy of the file at {@code path}, as a whole-file entry: the
   * file is moved into the cache (or deleted when it alone exceeds the budget).
   */
  public void adopt(String path, Path local) throws IOException {
    long size = Files.size(local);
    if (size > budget) {
      Files.deleteIfExists(local);
      return;
    }
    String name = encode(path);
    Files.move(local, files.resolve(name), StandardCopyOption.REPLACE_EXISTING);
    add("f:" + name, size);
  }

  /** Whether chunk {@code index} of {@code path} is cached. */
  public synchronized boolean hasChunk(String path, long index) {
    return entries.containsKey("c:" + chunkName(path, index));
  }

  /**
   * Copies {@code length} bytes at {@code offset} inside cached chunk {@code index} of {@code path}
   * into {@code buffer}; false when the chunk is not (or no longer) cached.
   */
  public boolean readChunk(
      String path, long index, int offset, byte[] buffer, int bufferOffset, int length) {
    String name = chunkName(path, index);
    synchronized (this) {
      if (entries.get("c:" + name) == null) {
        return false;
      }
    }
    try (FileChannel ch = FileChannel.open(chunks.resolve(name), StandardOpenOption.READ)) {
      ByteBuffer bb = ByteBuffer.wrap(buffer, bufferOffset, length);
      while (bb.hasRemaining()) {
        if (ch.read(bb, offset + (bb.position() - bufferOffset)) < 0) {
          remove("c:" + name, chunks.resolve(name));
          return false;
        }
      }
      hits.incrementAndGet();
      return true;
    } catch (NoSuchFileException e) {
      remove("c:" + name, chunks.resolve(name));
      return false;
    } catch (IOException e) {
      // An unreadable cache entry is only a miss.
      remove("c:" + name, chunks.resolve(name));
      return false;
    }
  }

  /** Caches chunk {@code index} of {@code path}: {@code length} bytes of {@code bytes}. */
  public void putChunk(String path, long index, byte[] bytes, int offset, int length) {
    if (length > budget) {
      return;
    }
    String name = chunkName(path, index);
    Path target = chunks.resolve(name);
    Path tmp = chunks.resolve(name + "." + UUID.randomUUID() + TMP);
    try {
      try (FileChannel ch =
          FileChannel.open(tmp, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
        ByteBuffer bb = ByteBuffer.wrap(bytes, offset, length);
        while (bb.hasRemaining()) {
          ch.write(bb);
        }
      }
      Files.move(tmp, target, StandardCopyOption.REPLACE_EXISTING);
    } catch (IOException e) {
      // A cache that cannot write only caches less.
      deleteQuietly(tmp);
      return;
    }
    fetchedChunks.incrementAndGet();
    add("c:" + name, length);
  }

  /** Forgets the whole-file entry of {@code path} and its chunks {@code first..last}. */
  public void drop(String path, long first, long last) {
    String name = encode(path);
    remove("f:" + name, files.resolve(name));
    for (long i = first; i <= last; i++) {
      String chunk = chunkName(path, i);
      remove("c:" + chunk, chunks.resolve(chunk));
    }
  }

  /** Forgets everything cached of {@code path}. */
  public void dropAll(String path) {
    String name = encode(path);
    remove("f:" + name, files.resolve(name));
    String prefix = "c:" + name + ".";
    List<String> gone = new ArrayList<>();
    synchronized (this) {
      for (String key : entries.keySet()) {
        if (key.startsWith(prefix)) {
          gone.add(key);
        }
      }
    }
    for (String key : gone) {
      remove(key, chunks.resolve(key.substring(2)));
    }
  }

  /**
   * Drops entries of every file not in {@code paths}: file names are unique only among the live
   * files of one volume, so a file that is no longer live may come back later with other bytes.
   */
  public void retainOnly(Set<String> paths) {
    Set<String> keep = new HashSet<>();
    for (String p : paths) {
      keep.add(encode(p));
    }
    List<String> gone = new ArrayList<>();
    synchronized (this) {
      for (String key : entries.keySet()) {
        String name = key.substring(2);
        String file = key.startsWith("f:") ? name : name.substring(0, name.lastIndexOf('.'));
        if (!keep.contains(file)) {
          gone.add(key);
        }
      }
    }
    for (String key : gone) {
      remove(key, (key.startsWith("f:") ? files : chunks).resolve(key.substring(2)));
    }
  }

  /** Bytes held. */
  public synchronized long usedBytes() {
    return used;
  }

  /** Chunk reads served from the cache. */
  public long hits() {
    return hits.get();
  }

  /** Chunks fetched from remote and cached. */
  public long fetchedChunks() {
    return fetchedChunks.get();
  }

  private void add(String key, long size) {
    synchronized (this) {
      Long previous = entries.put(key, size);
      used += size - (previous == null ? 0 : previous);
      evict();
    }
  }

  /** Deletes least recently used entries until the budget holds. Under this. */
  private void evict() {
    Iterator<Map.Entry<String, Long>> it = entries.entrySet().iterator();
    while (used > budget && it.hasNext()) {
      Map.Entry<String, Long> eldest = it.next();
      String key = eldest.getKey();
      used -= eldest.getValue();
      it.remove();
      deleteQuietly((key.startsWith("f:") ? files : chunks).resolve(key.substring(2)));
    }
  }

  private void remove(String key, Path file) {
    synchronized (this) {
      Long size = entries.remove(key);
      if (size != null) {
        used -= size;
      }
    }
    deleteQuietly(file);
  }

  private static String chunkName(String path, long index) {
    return encode(path) + "." + index;
  }

  /** A storage path as one file name: '%' and '/' escaped, so distinct paths stay distinct. */
  private static String encode(String path) {
    return path.replace("%", "%25").replace("/", "%2F");
  }

  private static void deleteQuietly(Path p) {
    try {
      Files.deleteIfExists(p);
    } catch (IOException ignored) {
      // A leftover entry file is dropped by the next open's scan or by eviction.
    }
  }

  private static void deleteTree(Path dir) throws IOException {
    if (!Files.exists(dir)) {
      return;
    }
    try (Stream<Path> s = Files.list(dir)) {
      for (Path p : (Iterable<Path>) s::iterator) {
        Files.deleteIfExists(p);
      }
    }
  }
}

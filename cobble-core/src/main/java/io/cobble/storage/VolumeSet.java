package io.cobble.storage;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.stream.Collectors;

/**
 * The volumes of one engine, checked for combinations that cannot work. Each rule's message names
 * the volumes involved and the fix.
 */
public final class VolumeSet {

  private final List<Volume> volumes;

  private VolumeSet(List<Volume> volumes) {
    this.volumes = Collections.unmodifiableList(new ArrayList<>(volumes));
  }

  /** The minimal setup: everything in one local directory. */
  public static VolumeSet local(String path) {
    return of(List.of(Volume.local(path)));
  }

  public static VolumeSet of(List<Volume> volumes) {
    if (volumes.isEmpty()) {
      throw new IllegalArgumentException(
          "No volume configured; give at least one local path for primary data.");
    }
    for (Volume volume : volumes) {
      checkKinds(volume);
    }
    for (int i = 0; i < volumes.size(); i++) {
      for (int j = i + 1; j < volumes.size(); j++) {
        checkDisjoint(volumes.get(i), volumes.get(j));
      }
    }
    if (volumes.stream().noneMatch(v -> v.kinds().stream().anyMatch(VolumeKind::isPrimary))) {
      throw new IllegalArgumentException(
          "No writable primary volume among "
              + volumes
              + "; mark at least one volume PRIMARY_HIGH, PRIMARY_MEDIUM or PRIMARY_LOW.");
    }
    atMostOne(volumes, VolumeKind.META);
    atMostOne(volumes, VolumeKind.SNAPSHOT);
    atMostOne(volumes, VolumeKind.CACHE);
    VolumeSet set = new VolumeSet(volumes);
    set.checkRemotePrimary();
    return set;
  }

  /** A remote first primary needs a local directory to stage new files and cache remote ones. */
  private void checkRemotePrimary() {
    Volume primary = primaries().get(0);
    if (!"file".equals(primary.uri().getScheme()) && cache().isEmpty()) {
      throw new IllegalArgumentException(
          "Primary volume "
              + primary.uri()
              + " is not a local directory, and no CACHE volume is configured: a Db working on"
              + " remote storage stages new files and caches remote blocks on a local CACHE"
              + " volume. Add one, for example Volume.of(\"/local/disk/cobble-cache\","
              + " VolumeKind.CACHE).");
    }
  }

  public List<Volume> volumes() {
    return volumes;
  }

  /** Primary volumes, high priority first, in configuration order within a priority. */
  public List<Volume> primaries() {
    List<Volume> ordered = new ArrayList<>();
    for (VolumeKind priority :
        List.of(VolumeKind.PRIMARY_HIGH, VolumeKind.PRIMARY_MEDIUM, VolumeKind.PRIMARY_LOW)) {
      for (Volume volume : volumes) {
        if (volume.serves(priority) && !ordered.contains(volume)) {
          ordered.add(volume);
        }
      }
    }
    return ordered;
  }

  /** The metadata volume: the one marked META, else the first primary. */
  public Volume meta() {
    return only(VolumeKind.META).orElseGet(() -> primaries().get(0));
  }

  /** The volume snapshots go to, if one is configured. */
  public Optional<Volume> snapshot() {
    return only(VolumeKind.SNAPSHOT);
  }

  public Optional<Volume> cache() {
    return only(VolumeKind.CACHE);
  }

  public List<Volume> readOnly() {
    return volumes.stream()
        .filter(v -> v.serves(VolumeKind.READ_ONLY))
        .collect(Collectors.toList());
  }

  @Override
  public String toString() {
    return "VolumeSet" + volumes;
  }

  private Optional<Volume> only(VolumeKind kind) {
    return volumes.stream().filter(v -> v.serves(kind)).findFirst();
  }

  private static void checkKinds(Volume volume) {
    if (volume.serves(VolumeKind.READ_ONLY) && volume.kinds().size() > 1) {
      throw new IllegalArgumentException(
          "Volume "
              + volume.uri()
              + " is READ_ONLY but also marked "
              + without(volume, VolumeKind.READ_ONLY)
              + ", which need writes; split it into two volumes or drop READ_ONLY.");
    }
    if (volume.serves(VolumeKind.CACHE)) {
      if (volume.kinds().size() > 1) {
        throw new IllegalArgumentException(
            "Volume "
                + volume.uri()
                + " is a CACHE, which may be wiped at any time, but also holds "
                + without(volume, VolumeKind.CACHE)
                + "; give the cache its own directory.");
      }
      if (!"file".equals(volume.uri().getScheme())) {
        throw new IllegalArgumentException(
            "CACHE volume "
                + volume.uri()
                + " must be a local path: a cache exists to avoid remote reads.");
      }
    }
  }

  private static void checkDisjoint(Volume a, Volume b) {
    if (a.uri().equals(b.uri())) {
      throw new IllegalArgumentException(
          "Volume "
              + a.uri()
              + " is configured twice; list it once with all its kinds "
              + "(for example PRIMARY_HIGH and META).");
    }
    if (a.contains(b) || b.contains(a)) {
      Volume outer = a.contains(b) ? a : b;
      Volume inner = outer == a ? b : a;
      throw new IllegalArgumentException(
          "Volume "
              + inner.uri()
              + " lies inside volume "
              + outer.uri()
              + "; volumes must not overlap, or cleaning one would delete the other's files.");
    }
  }

  private static void atMostOne(List<Volume> volumes, VolumeKind kind) {
    List<Volume> marked = volumes.stream().filter(v -> v.serves(kind)).collect(Collectors.toList());
    if (marked.size() > 1) {
      throw new IllegalArgumentException(
          "Only one volume may be "
              + kind
              + ", but "
              + marked.stream().map(v -> v.uri().toString()).collect(Collectors.joining(", "))
              + " are; keep one.");
    }
  }

  private static List<VolumeKind> without(Volume volume, VolumeKind kind) {
    return volume.kinds().stream().filter(k -> k != kind).collect(Collectors.toList());
  }
}

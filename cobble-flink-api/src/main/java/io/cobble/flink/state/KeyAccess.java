package io.cobble.flink.state;

/**
 * The current key of a keyed backend as the state objects need it. The line's backend implements
 * it: where Flink keeps the key context differs between lines.
 */
public interface KeyAccess<K> {

  K currentKey();

  int currentKeyGroup();
}

"""The wire protocol: length-prefixed msgpack frames and validated message types, sans-IO."""

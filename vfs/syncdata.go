package vfs

// SyncData makes f's contents durable, as f.Sync does, but may leave out
// the metadata that reading them back does not need, such as the
// modification time: on the OS file system of Linux it is fdatasync(2),
// which still makes a changed size and the blocks a write allocated
// durable, and so saves a journal commit when an overwrite changed
// neither. Elsewhere, and for a File that is not the OS's own (an
// in-memory file, or one that wraps another), it is f.Sync.
//
// pebble syncs its write-ahead log the same way (vfs.SyncData, fdatasync
// on Linux); Kafka's FileRecords.flush forces data and metadata.
func SyncData(f File) error {
	if d, ok := f.(dataSyncer); ok {
		return d.syncData()
	}
	return f.Sync()
}

// dataSyncer is a File whose contents can be made durable without its
// timestamps: the OS file system's.
type dataSyncer interface {
	syncData() error
}

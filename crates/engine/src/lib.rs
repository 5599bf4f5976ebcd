pub use rocksdb;

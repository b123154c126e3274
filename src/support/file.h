//===- support/file.h - Reading whole files ---------------------------------===//
//
// One way to read a configuration file, a manifest, a program text or a request file:
// checked to be a regular file first, so a directory or a device where a file is expected is
// an error that names it, never an exception (a std::ifstream on a directory throws from
// its stream buffer once read).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "support/status.h"

#include <cstdint>
#include <string>

namespace rs {

/// A regular file opened for reading: its descriptor (closed with the object) and size.
class RegularFile {
public:
  RegularFile(RegularFile &&other) noexcept : fd_(other.fd_), size_(other.size_) { other.fd_ = -1; }
  RegularFile &operator=(RegularFile &&) = delete;
  RegularFile(const RegularFile &) = delete;
  ~RegularFile();
  int fd() const { return fd_; }
  int64_t size() const { return size_; } // bytes, when opened

private:
  friend Result<RegularFile> openRegularFile(const std::string &path);
  explicit RegularFile(int fd) : fd_(fd) {}
  int fd_;
  int64_t size_ = 0;
};

/// Opens `path` for reading (without blocking: a FIFO with no writer must not wait forever)
/// and checks that it is a regular file. Errors, each message starting with the path:
/// NotFound "cannot open: <reason>" (missing, no permission), Internal "cannot stat:
/// <reason>", InvalidArgument "is a directory, not a file" / "is not a regular file".
Result<RegularFile> openRegularFile(const std::string &path);

/// The bytes of the regular file at `path`. Errors, each message starting with the path:
/// those of openRegularFile, and Internal "read failed: <reason>".
Result<std::string> readWholeFile(const std::string &path);

} // namespace rs

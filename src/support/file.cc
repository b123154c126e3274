//===- support/file.cc - Reading whole files --------------------------------===//
#include "support/file.h"

#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace rs {

RegularFile::~RegularFile() {
  if (fd_ >= 0)
    ::close(fd_);
}

Result<RegularFile> openRegularFile(const std::string &path) {
  // O_NONBLOCK: opening a FIFO with no writer would otherwise wait forever (it has no effect
  // on a regular file's reads).
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0)
    return notFound() << path << ": cannot open: " << std::strerror(errno);
  RegularFile file(fd);
  struct stat st {};
  if (::fstat(fd, &st) != 0)
    return internalError() << path << ": cannot stat: " << std::strerror(errno);
  if (S_ISDIR(st.st_mode))
    return invalidArgument() << path << ": is a directory, not a file";
  if (!S_ISREG(st.st_mode))
    return invalidArgument() << path << ": is not a regular file";
  file.size_ = static_cast<int64_t>(st.st_size);
  return file;
}

Result<std::string> readWholeFile(const std::string &path) {
  RS_ASSIGN_OR_RETURN(RegularFile file, openRegularFile(path));
  const int fd = file.fd();
  std::string text;
  text.reserve(static_cast<size_t>(file.size()));
  char buffer[1 << 16];
  while (true) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n == 0)
      break;
    if (n < 0) {
      if (errno == EINTR)
        continue;
      return internalError() << path << ": read failed: " << std::strerror(errno);
    }
    text.append(buffer, static_cast<size_t>(n));
  }
  return text;
}

} // namespace rs

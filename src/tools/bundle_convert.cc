//===- tools/bundle_convert.cc - `reactant-server bundle convert` ---------===//
#include "tools/bundle_convert.h"

#include "ir/printer.h"
#include "tools/bundle_programs.h"
#include "tools/file_output.h"

#include <filesystem>
#include <fstream>
#include <utility>
#include <vector>

#include <unistd.h>

namespace rs::tools {
namespace {

namespace fs = std::filesystem;
using detail::printError;

const char *formName(ConvertForm form) { return form == ConvertForm::kText ? "text" : "generic"; }

/// The text `form` gives for `path`.
Result<std::string> convertFile(const std::string &path, ConvertForm form) {
  RS_ASSIGN_OR_RETURN(detail::ProgramFile program, detail::readProgramFile(path));
  ir::PrintOptions options;
  options.locations = form == ConvertForm::kText;
  return ir::printGeneric(program.module, options);
}

/// Whether `output` may be written (see the file comment): OK when it does not exist or
/// --force may replace it.
Status checkOutput(const ConvertOptions &o, bool bundle) {
  std::error_code ec;
  if (!fs::exists(o.output, ec))
    return Status::ok();
  if (fs::equivalent(o.input, o.output, ec))
    return invalidArgument() << o.output << ": is the input " << o.input
                             << " (write the conversion elsewhere)";
  if (!o.force)
    return Status(StatusCode::kAlreadyExists, o.output + ": exists (--force replaces it)");
  const bool is_dir = fs::is_directory(o.output, ec);
  if (!bundle && is_dir)
    return invalidArgument() << o.output << ": is a directory, not a file";
  if (bundle && (!is_dir || (!fs::is_empty(o.output, ec) &&
                             !fs::is_regular_file(fs::path(o.output) / "manifest.yaml", ec))))
    return failedPrecondition() << o.output
                                << ": is not a bundle directory (no manifest.yaml) and is not "
                                   "empty; not replaced";
  return Status::ok();
}

int convertProgram(const ConvertOptions &o, std::ostream &out, std::ostream &err) {
  Result<std::string> text = convertFile(o.input, o.to);
  if (!text.isOk()) {
    printError(err, o.input, text.status());
    return 1;
  }
  if (o.output.empty()) {
    out << *text;
    return out.good() ? 0 : 1;
  }
  Status s = checkOutput(o, /*bundle=*/false);
  if (s.isOk())
    s = detail::writeFileAtomically(o.output, *text);
  if (!s.isOk()) {
    printError(err, o.output, s);
    return 1;
  }
  out << "ok " << o.output << ": 1 program as " << formName(o.to) << "\n";
  return 0;
}

/// Writes the converted bundle into the new directory `dir`: `copies` copied from the
/// input, `programs` (name, text) written.
Status writeBundle(const std::string &dir, const std::vector<std::string> &copies,
                   const std::vector<std::pair<std::string, std::string>> &programs,
                   const std::string &input) {
  std::error_code ec;
  if (!fs::create_directory(dir, ec))
    return internalError() << dir << ": cannot create the directory"
                           << (ec ? ": " + ec.message() : std::string(" (it exists)"));
  for (const std::string &name : copies) {
    fs::copy_file(fs::path(input) / name, fs::path(dir) / name, ec);
    if (ec)
      return internalError() << dir << "/" << name << ": cannot copy from " << input << ": "
                             << ec.message();
  }
  for (const auto &[name, text] : programs) {
    const std::string path = dir + "/" + name;
    std::ofstream file(path, std::ios::binary | std::ios::trunc);
    file << text;
    file.flush();
    if (!file)
      return internalError() << path << ": write failed";
  }
  return Status::ok();
}

int convertDirectory(const ConvertOptions &o, std::ostream &out, std::ostream &err) {
  std::error_code ec;
  if (!fs::is_regular_file(fs::path(o.input) / "manifest.yaml", ec)) {
    printError(err, o.input, notFound() << "not a bundle directory (no manifest.yaml)");
    return 1;
  }
  std::vector<std::string> copies = {"manifest.yaml"};
  if (fs::exists(fs::path(o.input) / "weights.safetensors", ec))
    copies.push_back("weights.safetensors");
  Result<std::vector<std::string>> names = detail::listProgramFiles(o.input);
  if (names.isOk() && names->empty())
    names = notFound() << o.input << ": no program file (model*.mlir)";
  if (!names.isOk()) {
    printError(err, o.input, names.status());
    return 1;
  }
  std::vector<std::pair<std::string, std::string>> programs;
  for (const std::string &name : *names) {
    const std::string path = o.input + "/" + name;
    Result<std::string> text = convertFile(path, o.to);
    if (!text.isOk()) {
      printError(err, path, text.status());
      return 1;
    }
    programs.emplace_back(name, std::move(text).value());
  }
  if (Status s = checkOutput(o, /*bundle=*/true); !s.isOk()) {
    printError(err, o.output, s);
    return 1;
  }
  const std::string tmp = o.output + ".tmp." + std::to_string(::getpid());
  Status s = writeBundle(tmp, copies, programs, o.input);
  if (s.isOk() && fs::exists(o.output, ec))
    fs::remove_all(o.output, ec); // checkOutput allowed it: --force on a bundle or empty dir
  if (s.isOk() && !ec)
    fs::rename(tmp, o.output, ec);
  if (s.isOk() && ec)
    s = internalError() << o.output << ": cannot replace with " << tmp << ": " << ec.message();
  if (!s.isOk()) {
    fs::remove_all(tmp, ec);
    printError(err, o.output, s);
    return 1;
  }
  out << "ok " << o.output << ": " << programs.size()
      << (programs.size() == 1 ? " program" : " programs") << " as " << formName(o.to)
      << "; copied";
  for (size_t i = 0; i < copies.size(); ++i)
    out << (i ? ", " : " ") << copies[i];
  out << "\n";
  return 0;
}

} // namespace

int convertBundle(const ConvertOptions &options, std::ostream &out, std::ostream &err) {
  ConvertOptions o = options;
  for (std::string *path : {&o.input, &o.output})
    while (path->size() > 1 && path->back() == '/')
      path->pop_back();
  if (!detail::isDirectory(o.input))
    return convertProgram(o, out, err);
  if (o.output.empty()) {
    err << "bundle convert: " << o.input << " is a bundle directory: -o OUTPUT (a new "
        << "directory) is required\n";
    return 2;
  }
  return convertDirectory(o, out, err);
}

} // namespace rs::tools

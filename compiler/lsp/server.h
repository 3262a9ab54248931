// irisc-lsp's server: the Language Server Protocol's requests and
// notifications over the open documents (docs/editors.md). Each open or
// change checks the document in-process (a few milliseconds) and publishes its
// diagnostics. Imported HIP headers are described by irisc-import-hip, which
// runs Clang for a second or more: a background thread runs it once per
// header (again only when the header changes on disk) and keeps the
// description; until it is there, the documents that import the header
// publish nothing new, and the server goes on answering from what it has.
#pragma once

#include "analysis.h"

#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <thread>

namespace irisc::lsp {

class Server {
 public:
  using Send = std::function<void(const llvm::json::Value&)>;

  // `imports`: the helper, the package's modules and the flags for headers;
  // `send` writes one message to the client.
  Server(ImportOptions imports, Send send);
  ~Server();

  // Handles one message from the client.
  void handle(const llvm::json::Value& message);
  // After the `exit` notification: the process's exit status (0 when
  // `shutdown` came first, as the protocol asks).
  bool exited() const { return exited_; }
  int exit_status() const { return shutdown_ ? 0 : 1; }

 private:
  struct Document {
    std::string path;
    std::string text;
    int64_t version = 0;
    std::unique_ptr<Analysis> analysis;
  };

  llvm::json::Value request(llvm::StringRef method, const llvm::json::Object& params);
  void notification(llvm::StringRef method, const llvm::json::Object& params);
  void analyse(const std::string& uri, Document& document);
  const HeaderDescription* described(const std::string& header);
  void describe_in_background();

  ImportOptions imports_;
  Send send_;
  bool shutdown_ = false;
  bool exited_ = false;

  // Held while a message is handled and while the background thread stores a
  // description and checks the documents again.
  std::mutex mutex_;
  std::map<std::string, Document> documents_;  // by URI
  std::map<std::string, HeaderDescription> descriptions_;  // by header and modification time
  std::deque<std::string> to_describe_;
  std::set<std::string> queued_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread describer_;
};

}  // namespace irisc::lsp

// The language server's messages; see server.h.
#include "server.h"

#include "completion.h"

#include <llvm/Support/FileSystem.h>

namespace irisc::lsp {
namespace {

// JSON-RPC's error codes.
constexpr int kInvalidRequest = -32600, kMethodNotFound = -32601, kInvalidParams = -32602;

struct RequestError {
  int code;
  std::string message;
};

// A header with its modification time: a header edited on disk is described again.
std::string description_key(const std::string& header) {
  llvm::sys::fs::file_status status;
  if (llvm::sys::fs::status(header, status)) return header;
  return header + "@" + std::to_string(status.getLastModificationTime().time_since_epoch().count());
}

Position position_in(const llvm::json::Object& params) {
  const llvm::json::Object* position = params.getObject("position");
  if (!position) throw RequestError{kInvalidParams, "no position"};
  return {static_cast<unsigned>(position->getInteger("line").value_or(0)),
          static_cast<unsigned>(position->getInteger("character").value_or(0))};
}

std::string uri_in(const llvm::json::Object& params) {
  const llvm::json::Object* document = params.getObject("textDocument");
  std::optional<llvm::StringRef> uri = document ? document->getString("uri") : std::nullopt;
  if (!uri) throw RequestError{kInvalidParams, "no textDocument.uri"};
  return uri->str();
}

}  // namespace

Server::Server(ImportOptions imports, Send send) : imports_(std::move(imports)), send_(std::move(send)) {
  imports_.describe = [this](const std::string& header) { return described(header); };
  describer_ = std::thread([this] { describe_in_background(); });
}

Server::~Server() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  describer_.join();
}

void Server::handle(const llvm::json::Value& message) {
  std::lock_guard lock(mutex_);
  const llvm::json::Object* object = message.getAsObject();
  std::optional<llvm::StringRef> method = object ? object->getString("method") : std::nullopt;
  const llvm::json::Value* id = object ? object->get("id") : nullptr;
  static const llvm::json::Object kNoParams;
  const llvm::json::Object* params = object ? object->getObject("params") : nullptr;
  if (!params) params = &kNoParams;
  if (!method) {
    if (id) send_(llvm::json::Object{{"jsonrpc", "2.0"}, {"id", *id},
                                     {"error", llvm::json::Object{{"code", kInvalidRequest}, {"message", "no method"}}}});
    return;  // a response to a request of ours: the server sends none
  }
  if (!id) {
    notification(*method, *params);
    return;
  }
  try {
    send_(llvm::json::Object{{"jsonrpc", "2.0"}, {"id", *id}, {"result", request(*method, *params)}});
  } catch (const RequestError& e) {
    send_(llvm::json::Object{{"jsonrpc", "2.0"}, {"id", *id},
                             {"error", llvm::json::Object{{"code", e.code}, {"message", e.message}}}});
  }
}

llvm::json::Value Server::request(llvm::StringRef method, const llvm::json::Object& params) {
  if (method == "initialize") {
    return llvm::json::Object{
        {"capabilities",
         llvm::json::Object{
             {"textDocumentSync", llvm::json::Object{{"openClose", true}, {"change", 1}}},  // full text
             {"hoverProvider", true},
             {"definitionProvider", true},
             {"documentSymbolProvider", true},
             {"completionProvider", llvm::json::Object{{"triggerCharacters", llvm::json::Array{"(", ",", "="}}}}}},
        {"serverInfo", llvm::json::Object{{"name", "irisc-lsp"}, {"version", IRIS_VERSION}}}};
  }
  if (method == "shutdown") {
    shutdown_ = true;
    return nullptr;
  }
  auto open = [&]() -> Document& {
    auto it = documents_.find(uri_in(params));
    if (it == documents_.end()) throw RequestError{kInvalidParams, "the document is not open"};
    return it->second;
  };
  if (method == "textDocument/hover") return open().analysis->hover(position_in(params));
  if (method == "textDocument/definition") return open().analysis->definition(position_in(params));
  if (method == "textDocument/documentSymbol") return open().analysis->symbols();
  if (method == "textDocument/completion") {
    const Document& document = open();
    return completions(document.text, offset_of(document.text, position_in(params)));
  }
  throw RequestError{kMethodNotFound, "unknown method " + method.str()};
}

void Server::notification(llvm::StringRef method, const llvm::json::Object& params) {
  if (method == "exit") {
    exited_ = true;
    return;
  }
  const llvm::json::Object* document = params.getObject("textDocument");
  if (!document) return;  // initialized, $/cancelRequest, ...: nothing to do
  std::optional<llvm::StringRef> uri = document->getString("uri");
  if (!uri) return;
  int64_t version = document->getInteger("version").value_or(0);
  if (method == "textDocument/didOpen") {
    Document& opened = documents_[uri->str()];
    opened = {path_of_uri(*uri), document->getString("text").value_or("").str(), version, nullptr};
    analyse(uri->str(), opened);
  } else if (method == "textDocument/didChange") {
    auto it = documents_.find(uri->str());
    const llvm::json::Array* changes = params.getArray("contentChanges");
    if (it == documents_.end() || !changes || changes->empty()) return;
    // Full text (the sync kind this server asks for): the last change holds it.
    const llvm::json::Object* last = changes->back().getAsObject();
    if (!last) return;
    it->second.text = last->getString("text").value_or("").str();
    it->second.version = version;
    analyse(it->first, it->second);
  } else if (method == "textDocument/didClose") {
    documents_.erase(uri->str());
    send_(llvm::json::Object{{"jsonrpc", "2.0"}, {"method", "textDocument/publishDiagnostics"},
                             {"params", llvm::json::Object{{"uri", *uri}, {"diagnostics", llvm::json::Array()}}}});
  }
}

// Checks the document; publishes its diagnostics unless a header it imports
// is still being described (the background thread checks it again then).
void Server::analyse(const std::string& uri, Document& document) {
  document.analysis = std::make_unique<Analysis>(document.path, document.text, imports_);
  if (document.analysis->imports_pending()) return;
  send_(llvm::json::Object{{"jsonrpc", "2.0"},
                           {"method", "textDocument/publishDiagnostics"},
                           {"params", llvm::json::Object{{"uri", uri},
                                                         {"version", document.version},
                                                         {"diagnostics", document.analysis->diagnostics()}}}});
}

// Called with the mutex held, while a document is checked.
const HeaderDescription* Server::described(const std::string& header) {
  if (auto it = descriptions_.find(description_key(header)); it != descriptions_.end()) return &it->second;
  if (queued_.insert(header).second) {
    to_describe_.push_back(header);
    wake_.notify_one();
  }
  return nullptr;
}

void Server::describe_in_background() {
  std::unique_lock lock(mutex_);
  while (true) {
    wake_.wait(lock, [this] { return stopping_ || !to_describe_.empty(); });
    if (stopping_) return;
    std::string header = to_describe_.front();
    std::string key = description_key(header);
    lock.unlock();
    HeaderDescription description = describe_header(header, imports_);
    lock.lock();
    descriptions_[key] = std::move(description);
    to_describe_.pop_front();
    queued_.erase(header);
    for (auto& [uri, document] : documents_)
      if (document.analysis && document.analysis->imports_pending()) analyse(uri, document);
  }
}

}  // namespace irisc::lsp

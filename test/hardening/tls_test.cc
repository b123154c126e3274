//===- test/hardening/tls_test.cc - TLS and mTLS on the gRPC and HTTP ports ===//
//
// Optional TLS (issue 8; frontend/tls.h): certificates made by the openssl CLI at test time
// (a CA, a server certificate for 127.0.0.1 and localhost, a client certificate, and a
// second CA nobody trusts). With tls.cert_file/key_file: a TLS request succeeds over both
// protocols, a plaintext one to the same port fails, the metrics port stays plaintext.
// With tls.client_ca_file too: no client certificate, or one from another CA, is
// refused; the CA's client certificate succeeds. Plus the configuration errors.
//
//===----------------------------------------------------------------------===//
#include "common/temp_dir.h"
#include "process_util.h"
#include "worker_util.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace rs::testing {
namespace {

namespace fs = std::filesystem;

/// A temporary directory with a CA, server and client certificates (EC P-256, 1 day).
class Certificates {
public:
  Certificates() {
    const std::string script = R"(set -e
cd ")" + dir_ + R"("
key() { openssl ecparam -name prime256v1 -genkey -noout -out "$1.key" 2>/dev/null; }
ca() { key "$1"; openssl req -x509 -new -key "$1.key" -out "$1.crt" -days 1 -subj "/CN=$1" 2>/dev/null; }
leaf() { # name ca extfile-line
  key "$1"
  openssl req -new -key "$1.key" -out "$1.csr" -subj "/CN=$1" 2>/dev/null
  printf '%s\n' "$3" > "$1.ext"
  openssl x509 -req -in "$1.csr" -CA "$2.crt" -CAkey "$2.key" -CAcreateserial -out "$1.crt" \
    -days 1 -extfile "$1.ext" 2>/dev/null
}
ca ca
ca rogue_ca
leaf server ca "subjectAltName=DNS:localhost,IP:127.0.0.1"
leaf client ca "extendedKeyUsage=clientAuth"
leaf rogue_client rogue_ca "extendedKeyUsage=clientAuth"
)";
    std::ofstream(dir_ + "/make.sh") << script;
    ok_ = std::system(("bash " + dir_ + "/make.sh").c_str()) == 0;
  }
  bool ok() const { return ok_; }
  std::string path(const std::string &name) const { return dir_ + "/" + name; }
  std::string pem(const std::string &name) const {
    std::ifstream in(path(name));
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
  }

private:
  rs::testing::TempDir tmp_{"rs_tls_test_"};
  std::string dir_ = tmp_.str();
  bool ok_ = false;
};

class Tls : public ::testing::Test {
protected:
  static void SetUpTestSuite() { certs_ = new Certificates(); }
  static void TearDownTestSuite() {
    delete certs_;
    certs_ = nullptr;
  }
  void SetUp() override { ASSERT_TRUE(certs_->ok()) << "the openssl CLI failed"; }

  std::unique_ptr<TestWorker> start(bool mutual) {
    WorkerSetup o;
    o.global_yaml = "  tls: {cert_file: \"" + certs_->path("server.crt") + "\", key_file: \"" +
                    certs_->path("server.key") + "\"" +
                    (mutual ? ", client_ca_file: \"" + certs_->path("ca.crt") + "\"" : "") + "}\n";
    return startHardeningWorker(kIrisRepo, o);
  }

  /// ModelInfer of one iris row over `credentials`; the status, and the logit count.
  static grpc::Status grpcInfer(const server::Worker &w,
                                std::shared_ptr<grpc::ChannelCredentials> credentials,
                                int *logits = nullptr) {
    auto stub = inference::GRPCInferenceService::NewStub(
        grpc::CreateChannel("127.0.0.1:" + std::to_string(w.grpcPort()), std::move(credentials)));
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(20));
    inference::ModelInferResponse reply;
    grpc::Status s = stub->ModelInfer(&ctx, irisRequest(irisRow()), &reply);
    if (logits)
      *logits = reply.raw_output_contents_size() == 1
                    ? static_cast<int>(reply.raw_output_contents(0).size() / sizeof(float))
                    : -1;
    return s;
  }

  /// TLS credentials trusting the test CA, with the client certificate `client` ("" none).
  static std::shared_ptr<grpc::ChannelCredentials> tlsCredentials(const std::string &client) {
    grpc::SslCredentialsOptions o;
    o.pem_root_certs = certs_->pem("ca.crt");
    if (!client.empty()) {
      o.pem_cert_chain = certs_->pem(client + ".crt");
      o.pem_private_key = certs_->pem(client + ".key");
    }
    return grpc::SslCredentials(o);
  }

  /// POST of one iris row to /v2/models/iris_mlp/infer over HTTPS (client certificate
  /// `client`, "" none); the HTTP status, or -1 when no answer came (the error in `why`).
  static int httpsInfer(const server::Worker &w, const std::string &client, std::string *why) {
    std::unique_ptr<httplib::SSLClient> c =
        client.empty() ? std::make_unique<httplib::SSLClient>("127.0.0.1", w.httpPort())
                       : std::make_unique<httplib::SSLClient>("127.0.0.1", w.httpPort(),
                                                              certs_->path(client + ".crt"),
                                                              certs_->path(client + ".key"));
    c->set_ca_cert_path(certs_->path("ca.crt").c_str());
    c->enable_server_certificate_verification(true);
    c->set_read_timeout(20, 0);
    httplib::Result r =
        c->Post("/v2/models/iris_mlp/infer", irisJson(irisRow()), "application/json");
    if (!r) {
      *why = httplib::to_string(r.error());
      return -1;
    }
    return r->status;
  }

  static Certificates *certs_;
};

Certificates *Tls::certs_ = nullptr;

TEST_F(Tls, ServerCertificateTlsOnBothProtocolsPlaintextRefused) {
  std::unique_ptr<TestWorker> w = start(false);
  ASSERT_NE(w, nullptr);
  int logits = 0;
  grpc::Status s = grpcInfer(w->worker(), tlsCredentials(""), &logits);
  EXPECT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(logits, 3);
  std::string why;
  EXPECT_EQ(httpsInfer(w->worker(), "", &why), 200) << why;

  // Plaintext to the TLS ports: no answer.
  grpc::Status plain = grpcInfer(w->worker(), grpc::InsecureChannelCredentials());
  EXPECT_EQ(plain.error_code(), grpc::StatusCode::UNAVAILABLE) << plain.error_message();
  httplib::Client http("127.0.0.1", w->worker().httpPort());
  http.set_read_timeout(20, 0);
  httplib::Result r =
      http.Post("/v2/models/iris_mlp/infer", irisJson(irisRow()), "application/json");
  EXPECT_FALSE(r) << "a plaintext request to the HTTPS port got status " << r->status;

  // The metrics and health port stays plaintext.
  httplib::Result health = w->metrics()->Get("/healthz");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 200);
}

TEST_F(Tls, MutualTlsNeedsAClientCertificateFromTheConfiguredCa) {
  std::unique_ptr<TestWorker> w = start(true);
  ASSERT_NE(w, nullptr);
  int logits = 0;
  grpc::Status with_cert = grpcInfer(w->worker(), tlsCredentials("client"), &logits);
  EXPECT_TRUE(with_cert.ok()) << with_cert.error_message();
  EXPECT_EQ(logits, 3);
  std::string why;
  EXPECT_EQ(httpsInfer(w->worker(), "client", &why), 200) << why;

  grpc::Status no_cert = grpcInfer(w->worker(), tlsCredentials(""));
  EXPECT_EQ(no_cert.error_code(), grpc::StatusCode::UNAVAILABLE) << no_cert.error_message();
  grpc::Status rogue = grpcInfer(w->worker(), tlsCredentials("rogue_client"));
  EXPECT_EQ(rogue.error_code(), grpc::StatusCode::UNAVAILABLE) << rogue.error_message();
  EXPECT_EQ(httpsInfer(w->worker(), "", &why), -1);
  EXPECT_EQ(httpsInfer(w->worker(), "rogue_client", &why), -1);
}

TEST_F(Tls, InferCommandSpeaksTlsOnBothProtocols) {
  const std::string input = certs_->path("request.json");
  std::ofstream(input) << irisJson(irisRow());
  const std::string infer = std::string(RS_SERVER_BINARY) + " infer --model iris_mlp --input " +
                            input + " --ca-file " + certs_->path("ca.crt") + " ";
  {
    auto w = start(false);
    ASSERT_NE(w, nullptr);
    const std::string grpc_url = "127.0.0.1:" + std::to_string(w->worker().grpcPort());
    const std::string http_url = "127.0.0.1:" + std::to_string(w->worker().httpPort());
    auto [rc, out] = runCommand(infer + "--url " + grpc_url);
    EXPECT_EQ(rc, 0) << out;
    EXPECT_NE(out.find("logits"), std::string::npos) << out;
    std::tie(rc, out) = runCommand(infer + "--protocol http --url " + http_url);
    EXPECT_EQ(rc, 0) << out;
    EXPECT_NE(out.find("logits"), std::string::npos) << out;
    // Without TLS the TLS port answers nothing usable.
    std::tie(rc, out) =
        runCommand(std::string(RS_SERVER_BINARY) + " infer --model iris_mlp --input " + input +
                   " --url " + grpc_url);
    EXPECT_EQ(rc, 1) << out;
    // A CA that did not sign the server's certificate.
    std::tie(rc, out) =
        runCommand(std::string(RS_SERVER_BINARY) + " infer --model iris_mlp --input " + input +
                   " --url " + grpc_url + " --ca-file " + certs_->path("rogue_ca.crt"));
    EXPECT_EQ(rc, 1) << out;
  }
  {
    auto w = start(true); // mutual TLS: the client certificate is needed
    ASSERT_NE(w, nullptr);
    const std::string grpc_url = "127.0.0.1:" + std::to_string(w->worker().grpcPort());
    const std::string http_url = "127.0.0.1:" + std::to_string(w->worker().httpPort());
    const std::string client =
        " --cert-file " + certs_->path("client.crt") + " --key-file " + certs_->path("client.key");
    auto [rc, out] = runCommand(infer + "--url " + grpc_url + client);
    EXPECT_EQ(rc, 0) << out;
    std::tie(rc, out) = runCommand(infer + "--protocol http --url " + http_url + client);
    EXPECT_EQ(rc, 0) << out;
    std::tie(rc, out) = runCommand(infer + "--url " + grpc_url);
    EXPECT_EQ(rc, 1) << out;
    std::tie(rc, out) =
        runCommand(infer + "--url " + grpc_url + " --cert-file " + certs_->path("client.crt"));
    EXPECT_EQ(rc, 1);
    EXPECT_EQ(out, "error: INVALID_ARGUMENT: request not sent: a TLS client certificate needs "
                   "its key and the other way round (--cert-file and --key-file)\n");
  }
}

TEST_F(Tls, ConfigurationErrorsNameTheKeyOrFile) {
  auto resolve = [](const std::string &tls_yaml) -> Status {
    Result<config::NodeConfig> node = config::parseNodeFile(
        "model_repo: repo\nglobal:\n  tls: " + tls_yaml + "\n", "node.yaml", {});
    return node.status();
  };
  EXPECT_EQ(resolve("{cert_file: a.crt}").message(),
            "node.yaml:3:9: global.tls.cert_file: set without tls.key_file (TLS needs both)");
  EXPECT_EQ(resolve("{key_file: a.key}").message(),
            "node.yaml:3:9: global.tls.key_file: set without tls.cert_file (TLS needs both)");
  EXPECT_EQ(
      resolve("{client_ca_file: ca.crt}").message(),
      "node.yaml:3:9: global.tls.client_ca_file: needs tls.cert_file and tls.key_file (client "
      "certificates are checked over TLS)");

  // A certificate that cannot be read stops the worker's start, naming the file.
  Result<config::NodeConfig> node = config::parseNodeFile(
      "model_repo: \"" + kIrisRepo +
          "\"\nglobal:\n  models_include: [iris_mlp]\n  runtime: {executable_cache: false}\n"
          "  endpoints: {host: 127.0.0.1}\n  tls: {cert_file: /nonexistent/server.crt, key_file: "
          "/nonexistent/server.key}\n",
      "node.yaml", {});
  ASSERT_TRUE(node.isOk()) << node.status().toString();
  Result<config::WorkerConfig> cfg = config::resolveWorker(*node, 0);
  ASSERT_TRUE(cfg.isOk());
  server::Worker worker(server::WorkerOptions{.config = *cfg, .ephemeral_ports = true});
  Status s = worker.start();
  EXPECT_EQ(s.toString(), "FAILED_PRECONDITION: grpc server: tls.cert_file "
                          "/nonexistent/server.crt: cannot open: No such file or directory");
  worker.shutdown();
}

TEST_F(Tls, KeyOfAnotherCertificateOrNoPemIsRefusedByName) {
  // server.crt with client.key: both parse, but they are not a pair.
  EXPECT_EQ(frontend::checkKeyMatchesCertificate(
                certs_->pem("server.crt"), certs_->pem("client.key"), "server.crt", "client.key")
                .toString(),
            "FAILED_PRECONDITION: tls.key_file client.key is not the private key of the "
            "certificate in tls.cert_file server.crt");
  EXPECT_TRUE(frontend::checkKeyMatchesCertificate(
                  certs_->pem("server.crt"), certs_->pem("server.key"), "server.crt", "server.key")
                  .isOk());
  // A chain: the leaf certificate first, then its CA; the key is the leaf's.
  EXPECT_TRUE(
      frontend::checkKeyMatchesCertificate(certs_->pem("server.crt") + certs_->pem("ca.crt"),
                                           certs_->pem("server.key"), "chain.crt", "server.key")
          .isOk());
  EXPECT_EQ(frontend::checkKeyMatchesCertificate("not a certificate", certs_->pem("server.key"),
                                                 "a.crt", "server.key")
                .toString(),
            "FAILED_PRECONDITION: tls.cert_file a.crt holds no PEM certificate");
  EXPECT_EQ(frontend::checkKeyMatchesCertificate(
                certs_->pem("server.crt"), certs_->pem("server.crt"), "server.crt", "server.crt")
                .toString(),
            "FAILED_PRECONDITION: tls.key_file server.crt holds no PEM private key (or one with "
            "a passphrase)");

  // A client CA file with no certificate in it (before: gRPC's "cannot bind").
  frontend::TlsOptions bad_ca{certs_->path("server.crt"), certs_->path("server.key"),
                              certs_->path("server.key")};
  EXPECT_EQ(frontend::grpcServerCredentials(bad_ca).status().toString(),
            "FAILED_PRECONDITION: tls.client_ca_file " + certs_->path("server.key") +
                " holds no PEM certificate");

  // The worker's start stops on it, naming both files (before: "cannot bind").
  Result<config::NodeConfig> node = config::parseNodeFile(
      "model_repo: \"" + kIrisRepo +
          "\"\nglobal:\n  models_include: [iris_mlp]\n  runtime: {executable_cache: false}\n"
          "  endpoints: {host: 127.0.0.1}\n  tls: {cert_file: \"" +
          certs_->path("server.crt") + "\", key_file: \"" + certs_->path("client.key") + "\"}\n",
      "node.yaml", {});
  ASSERT_TRUE(node.isOk()) << node.status().toString();
  Result<config::WorkerConfig> cfg = config::resolveWorker(*node, 0);
  ASSERT_TRUE(cfg.isOk());
  server::Worker worker(server::WorkerOptions{.config = *cfg, .ephemeral_ports = true});
  EXPECT_EQ(worker.start().toString(),
            "FAILED_PRECONDITION: grpc server: tls.key_file " + certs_->path("client.key") +
                " is not the private key of the certificate in tls.cert_file " +
                certs_->path("server.crt"));
  worker.shutdown();
}

} // namespace
} // namespace rs::testing

#include "profiler/store/tune_store.h"

#include <unistd.h>

#include <filesystem>

#include "profiler/core/atomic_file.h"
#include "profiler/store/schema.h"

namespace fs = std::filesystem;

namespace ddpscope::store {

namespace {

int64_t insert_run(Connection& c, const TuneRun& r) {
  Statement st(c,
               "INSERT INTO tune_runs(started, workload, workload_bytes, params, host, "
               "command_line, warmup, iters, first_bucket_mb, recommendation) "
               "VALUES(?,?,?,?,?,?,?,?,?,?)");
  st.bind_text(1, r.started);
  st.bind_text(2, r.workload);
  st.bind(3, r.workload_bytes);
  st.bind(4, int64_t(r.params));
  st.bind_text(5, r.host);
  st.bind_text(6, r.command_line);
  st.bind(7, int64_t(r.warmup));
  st.bind(8, int64_t(r.iters));
  st.bind(9, r.first_bucket_mb);
  st.bind_text(10, r.recommendation);
  st.run();
  Statement id(c, "SELECT last_insert_rowid()");
  id.step();
  return id.int64(0);
}

void insert_samples(Connection& c, int64_t run_id, const std::vector<TuneSample>& samples) {
  Statement st(c,
               "INSERT INTO tune_results(run_id, backend, topology, nranks, bucket_mb, "
               "first_bucket_mb, buckets, iteration, iter_ms, comm_ms, exposed_ms) "
               "VALUES(?,?,?,?,?,?,?,?,?,?,?)");
  for (const auto& s : samples) {
    st.bind(1, run_id);
    st.bind_text(2, s.backend);
    st.bind_text(3, s.topology);
    st.bind(4, int64_t(s.nranks));
    st.bind(5, s.bucket_mb);
    st.bind(6, s.first_bucket_mb);
    st.bind(7, int64_t(s.buckets));
    st.bind(8, int64_t(s.iteration));
    st.bind(9, s.iter_ms);
    st.bind(10, s.comm_ms);
    st.bind(11, s.exposed_ms);
    st.run();
  }
}

int64_t append(const std::string& path, const TuneRun& run,
               const std::vector<TuneSample>& samples) {
  Connection c(path, Connection::Mode::read_write);
  Transaction tx(c);
  int64_t id = insert_run(c, run);
  insert_samples(c, id, samples);
  tx.commit();
  return id;
}

}  // namespace

int64_t write_tune_run(const std::string& path, TuneRun run,
                       const std::vector<TuneSample>& samples) {
  if (fs::exists(path)) {
    RunReader check(path);  // refuses foreign or newer files before we write
    return append(path, run, samples);
  }
  int64_t id = 0;
  core::replace_atomically(path, [&](const std::string& tmp) {
    {
      Connection c(tmp, Connection::Mode::create);
      create_schema(c);
      c.exec(
          "INSERT INTO meta(key, value) VALUES('tool', 'ddpscope'), ('kind', 'tune'), "
          "('timeline', 'wall'), ('schema_version', '" +
          std::to_string(kSchemaVersion) + "')");
    }
    id = append(tmp, run, samples);
  });
  return id;
}

std::vector<TuneRun> read_tune_runs(RunReader& reader) {
  std::vector<TuneRun> out;
  Statement st(reader.connection(),
               "SELECT id, started, workload, workload_bytes, params, host, command_line, warmup, "
               "iters, first_bucket_mb, recommendation FROM tune_runs ORDER BY id");
  while (st.step()) {
    TuneRun r;
    r.id = st.int64(0);
    r.started = st.text(1);
    r.workload = st.text(2);
    r.workload_bytes = st.int64(3);
    r.params = int(st.int64(4));
    r.host = st.text(5);
    r.command_line = st.text(6);
    r.warmup = int(st.int64(7));
    r.iters = int(st.int64(8));
    r.first_bucket_mb = st.real(9);
    r.recommendation = st.text(10);
    out.push_back(r);
  }
  return out;
}

std::vector<TuneSample> read_tune_samples(RunReader& reader, int64_t run_id) {
  if (run_id == 0) {
    Statement last(reader.connection(), "SELECT max(id) FROM tune_runs");
    if (last.step()) run_id = last.int64(0);
  }
  std::vector<TuneSample> out;
  Statement st(reader.connection(),
               "SELECT backend, topology, nranks, bucket_mb, first_bucket_mb, buckets, iteration, "
               "iter_ms, comm_ms, exposed_ms FROM tune_results WHERE run_id = ? "
               "ORDER BY backend, nranks, bucket_mb, iteration");
  st.bind(1, run_id);
  while (st.step()) {
    TuneSample s;
    s.backend = st.text(0);
    s.topology = st.text(1);
    s.nranks = int(st.int64(2));
    s.bucket_mb = st.real(3);
    s.first_bucket_mb = st.real(4);
    s.buckets = int(st.int64(5));
    s.iteration = int(st.int64(6));
    s.iter_ms = st.real(7);
    s.comm_ms = st.real(8);
    s.exposed_ms = st.real(9);
    out.push_back(s);
  }
  return out;
}

}  // namespace ddpscope::store

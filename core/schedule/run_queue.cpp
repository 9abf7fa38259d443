#include "core/schedule/run_queue.h"

#include <cstdlib>

namespace tidemark {

RunQueue::RunQueue(std::size_t workers) : workers_(workers) {
  if (workers_ == 0) std::abort();  // a queue nothing ever drains
}

RunQueue::Offer RunQueue::offer(const Firing& firing) {
  const JobKey key{firing.table, firing.kind};
  if (running_.count(key) || waiting_.count(key)) return Offer::Overrun;
  if (running_.size() < workers_) {
    running_.insert(key);
    return Offer::Start;
  }
  const Order order{firing.scheduled, arrivals_++, key};
  by_order_.insert(order);
  waiting_.emplace(key, std::make_pair(order, firing));
  return Offer::Queued;
}

std::optional<Firing> RunQueue::finished(const TableKey& table, JobKind kind) {
  if (running_.erase(JobKey{table, kind}) == 0) std::abort();  // finished a run that never started
  if (by_order_.empty()) return std::nullopt;
  const Order next = *by_order_.begin();
  by_order_.erase(by_order_.begin());
  const auto it = waiting_.find(std::get<2>(next));
  Firing firing = it->second.second;
  waiting_.erase(it);
  running_.insert(JobKey{firing.table, firing.kind});
  return firing;
}

bool RunQueue::remove(const TableKey& table, JobKind kind) {
  const auto it = waiting_.find(JobKey{table, kind});
  if (it == waiting_.end()) return false;
  by_order_.erase(it->second.first);
  waiting_.erase(it);
  return true;
}

std::vector<Firing> RunQueue::clear() {
  std::vector<Firing> dropped;
  for (const Order& order : by_order_) dropped.push_back(waiting_.at(std::get<2>(order)).second);
  by_order_.clear();
  waiting_.clear();
  return dropped;
}

}  // namespace tidemark

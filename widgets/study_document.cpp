#include "widgets/study_document.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QSaveFile>
#include <QSet>

#include <toml++/toml.h>

#include <algorithm>
#include <climits>
#include <functional>
#include <map>

#include "core/util/toml_guard.h"
#include "widgets/study_toml.h"

namespace lmk::widgets {

using namespace study_toml;

namespace {

// Where an item (a key and its value, or a table header) stood in the file; line 0: added since,
// written after the file's items in the order they were added.
struct Place {
  int line = 0;
  int column = 0;
  int end_line = 0;
  quint64 added = 0;
};

// The identity of a key path across edits (an element of an array of tables is "#INDEX").
QString path_key(const QStringList& keys) {
  return keys.join(QChar(0x1f));
}

}  // namespace

struct StudyDocument::Impl {
  toml::table root;
  QStringList lines;                  // the text the document was read from
  QHash<QString, Place> places;       // by path_key
  QHash<QString, QString> comments;   // a value's or header's comment on its line, by path_key
  QHash<QString, QString> spellings;  // a value as the file wrote it ("1e-3"), by path_key
  QHash<int, QStringList> leading;    // comment and blank lines above the item starting there
  QStringList footer;                 // after the last item
  quint64 next_added = 1;

  void record_table(const toml::table& table, const QStringList& keys);
  void record_comments();
  Place place_of(const QStringList& keys) const { return places.value(path_key(keys)); }
  void note_added(const QStringList& keys) {
    const QString k = path_key(keys);
    if (!places.contains(k)) places.insert(k, Place{0, 0, 0, next_added++});
  }
  // The entries of a table in file order, then the added ones.
  std::vector<std::pair<QString, const toml::node*>> ordered(const toml::table& table,
                                                             const QStringList& keys) const;
};

void StudyDocument::Impl::record_table(const toml::table& table, const QStringList& keys) {
  for (auto&& [key, value] : table) {
    QStringList child = keys;
    child << QString::fromStdString(std::string(key.str()));
    Place place;
    place.line = static_cast<int>(key.source().begin.line);
    place.column = static_cast<int>(key.source().begin.column);
    place.end_line = is_section(value) ? place.line : static_cast<int>(value.source().end.line);
    if (place.line > 0 && place.line <= lines.size()) {
      const QString& text = lines[place.end_line - 1];
      if (value.is_table() && !value.as_table()->is_inline()) {
        const QString line = lines[place.line - 1].trimmed();
        if (line.startsWith(QChar('[')) &&
            QString(line).remove(QChar(' ')).startsWith(QChar('[') + header_text(child) + ']'))
          comments.insert(path_key(child), header_comment(line));
      } else if (!value.is_array_of_tables()) {
        const int begin = static_cast<int>(value.source().begin.column) - 1;
        const int end = static_cast<int>(value.source().end.column) - 1;
        QString tail = text.mid(end);
        while (!tail.isEmpty() && tail.back().isSpace()) tail.chop(1);
        if (tail.trimmed().startsWith(QChar('#'))) comments.insert(path_key(child), tail);
        if (value.source().begin.line == value.source().end.line)
          spellings.insert(path_key(child), text.mid(begin, end - begin));
      }
    }
    places.insert(path_key(child), place);
    if (value.is_table() && !value.as_table()->is_inline()) {
      record_table(*value.as_table(), child);
    } else if (value.is_array_of_tables()) {
      int index = 0;
      for (const toml::node& element : *value.as_array()) {
        QStringList element_keys = child;
        element_keys << QStringLiteral("#%1").arg(index++);
        Place element_place;
        element_place.line = static_cast<int>(element.source().begin.line);
        element_place.column = static_cast<int>(element.source().begin.column);
        element_place.end_line = element_place.line;
        places.insert(path_key(element_keys), element_place);
        if (element_place.line > 0 && element_place.line <= lines.size())
          comments.insert(path_key(element_keys), header_comment(lines[element_place.line - 1]));
        record_table(*element.as_table(), element_keys);
      }
    }
  }
}

// Lines between items are comments or blank: each run of them belongs to the item below it.
void StudyDocument::Impl::record_comments() {
  std::map<int, int> spans;  // first line -> last line of the items starting there
  for (const Place& place : places)
    if (place.line > 0) spans[place.line] = std::max(spans[place.line], place.end_line);
  int previous_end = 0;
  auto comment_lines = [&](int from, int to) {
    QStringList out;
    for (int line = from; line <= to && line <= lines.size(); ++line) {
      const QString text = lines[line - 1];
      if (text.trimmed().isEmpty() || text.trimmed().startsWith(QChar('#')))
        out << (text.trimmed().isEmpty() ? QString() : text);
    }
    return out;
  };
  for (const auto& [line, end] : spans) {
    if (line > previous_end + 1) leading.insert(line, comment_lines(previous_end + 1, line - 1));
    previous_end = std::max(previous_end, end);
  }
  footer = comment_lines(previous_end + 1, static_cast<int>(lines.size()));
  while (!footer.isEmpty() && footer.last().isEmpty()) footer.removeLast();
}

std::vector<std::pair<QString, const toml::node*>> StudyDocument::Impl::ordered(
    const toml::table& table, const QStringList& keys) const {
  std::vector<std::pair<QString, const toml::node*>> entries;
  for (auto&& [key, value] : table)
    entries.emplace_back(QString::fromStdString(std::string(key.str())), &value);
  auto rank = [&](const QString& name) {
    const Place place = place_of(QStringList(keys) << name);
    return place.line > 0 ? std::make_tuple(0, place.line, quint64(place.column))
                          : std::make_tuple(1, 0, place.added);
  };
  std::stable_sort(entries.begin(), entries.end(),
                   [&](const auto& a, const auto& b) { return rank(a.first) < rank(b.first); });
  return entries;
}

namespace {

// Writes a document: items in order, each after the comment lines that stood above it.
class Writer {
 public:
  Writer(const QHash<int, QStringList>& leading, const QHash<QString, QString>& comments)
      : leading_(leading), comments_(comments) {}

  QString out;

  void comments_above(int line) {
    if (line <= 0 || written_.contains(line)) return;
    written_.insert(line);
    for (const QString& text : leading_.value(line)) out += text + QChar('\n');
  }
  void blank_line_before_new_section() {
    if (!out.isEmpty() && !out.endsWith(QStringLiteral("\n\n"))) out += QChar('\n');
  }
  QString comment(const QStringList& keys) const { return comments_.value(path_key(keys)); }

 private:
  const QHash<int, QStringList>& leading_;
  const QHash<QString, QString>& comments_;
  QSet<int> written_;
};

}  // namespace

StudyDocument::StudyDocument() : impl_(std::make_unique<Impl>()) {}
StudyDocument::StudyDocument(const StudyDocument& other)
    : impl_(std::make_unique<Impl>(*other.impl_)), path_(other.path_), modified_(other.modified_) {}
StudyDocument& StudyDocument::operator=(const StudyDocument& other) {
  if (this != &other) {
    impl_ = std::make_unique<Impl>(*other.impl_);
    path_ = other.path_;
    modified_ = other.modified_;
  }
  return *this;
}
StudyDocument::~StudyDocument() = default;

bool StudyDocument::load(const QString& path, QString* error) {
  QFile file(path);
  if (!file.open(QIODevice::ReadOnly)) {
    if (error) *error = QStringLiteral("%1: %2").arg(path, file.errorString());
    return false;
  }
  if (!load_text(QString::fromUtf8(file.readAll()), error, path)) return false;
  path_ = QFileInfo(path).absoluteFilePath();
  return true;
}

bool StudyDocument::load_text(const QString& text, QString* error, const QString& source_name) {
  auto impl = std::make_unique<Impl>();
  const std::string utf8 = text.toStdString();
  if (const std::string unsafe = toml_unsafe_text(utf8); !unsafe.empty()) {
    if (error)
      *error = QStringLiteral("%1: %2").arg(
          source_name.isEmpty() ? QStringLiteral("(text)") : source_name,
          QString::fromStdString(unsafe));
    return false;
  }
  try {
    impl->root = toml::parse(utf8, source_name.toStdString());
  } catch (const toml::parse_error& e) {
    if (error)
      *error = QStringLiteral("%1:%2: %3")
                   .arg(source_name.isEmpty() ? QStringLiteral("(text)") : source_name)
                   .arg(e.source().begin.line)
                   .arg(QString::fromStdString(std::string(e.description())));
    return false;
  }
  impl->lines = text.split(QChar('\n'));
  for (QString& line : impl->lines)
    if (line.endsWith(QChar('\r'))) line.chop(1);
  impl->record_table(impl->root, {});
  impl->record_comments();
  impl_ = std::move(impl);
  path_.clear();
  modified_ = false;
  return true;
}

bool StudyDocument::save(const QString& path, QString* error) {
  QSaveFile file(path);
  if (!file.open(QIODevice::WriteOnly) || file.write(to_text().toUtf8()) < 0 || !file.commit()) {
    if (error) *error = QStringLiteral("%1: %2").arg(path, file.errorString());
    return false;
  }
  path_ = QFileInfo(path).absoluteFilePath();
  modified_ = false;
  return true;
}

QString StudyDocument::to_text() const {
  Writer writer(impl_->leading, impl_->comments);
  // A value keeps the file's spelling ("1e-3", a literal string) while it means the same.
  auto spelled = [&](const QStringList& keys, const toml::node& node) {
    const QString original = impl_->spellings.value(path_key(keys));
    const QVariant now = variant_of(node);
    if (!original.isEmpty()) {
      const QVariant then = parse_value(original);
      if (then.typeId() == now.typeId() && then == now) return original;
    }
    return node_text(node);
  };
  // A table's own values under its header, then its sub-tables.
  std::function<void(const toml::table&, const QStringList&)> body;
  auto section = [&](const toml::table& table, const QStringList& keys, bool array_element) {
    const Place place = impl_->place_of(keys);
    writer.comments_above(place.line);
    bool has_values = table.empty();
    for (auto&& [key, value] : table) has_values = has_values || !is_section(value);
    if (has_values || array_element) {
      if (place.line == 0) writer.blank_line_before_new_section();
      const QString header = header_text(array_element ? keys.mid(0, keys.size() - 1) : keys);
      writer.out +=
          (array_element ? QStringLiteral("[[%1]]") : QStringLiteral("[%1]")).arg(header) +
          writer.comment(keys) + QChar('\n');
    }
    body(table, keys);
  };
  body = [&](const toml::table& table, const QStringList& keys) {
    const auto entries = impl_->ordered(table, keys);
    for (const auto& [name, node] : entries) {
      if (is_section(*node)) continue;
      const QStringList child = QStringList(keys) << name;
      writer.comments_above(impl_->place_of(child).line);
      writer.out += key_text(name) + QStringLiteral(" = ") + spelled(child, *node) +
                    writer.comment(child) + QChar('\n');
    }
    for (const auto& [name, node] : entries) {
      const QStringList child = QStringList(keys) << name;
      if (node->is_array_of_tables()) {
        int index = 0;
        for (const toml::node& element : *node->as_array())
          section(*element.as_table(), QStringList(child) << QStringLiteral("#%1").arg(index++),
                  true);
      } else if (is_section(*node)) {
        section(*node->as_table(), child, false);
      }
    }
  };
  body(impl_->root, {});
  for (const QString& line : impl_->footer) writer.out += line + QChar('\n');
  return writer.out;
}

namespace {

const toml::node* find_node(const toml::table& root, const QStringList& keys) {
  const toml::node* node = &root;
  for (const QString& key : keys) {
    const toml::table* table = node->as_table();
    if (table == nullptr) return nullptr;
    node = table->get(key.toStdString());
    if (node == nullptr) return nullptr;
  }
  return node;
}

}  // namespace

QVariant StudyDocument::value(const QStringList& keys) const {
  const toml::node* node = find_node(impl_->root, keys);
  return node == nullptr ? QVariant() : variant_of(*node);
}

void StudyDocument::set_value(const QStringList& keys, const QVariant& value) {
  if (keys.isEmpty()) return;
  if (!value.isValid()) {
    if (find_node(impl_->root, keys) == nullptr) return;
    // Drops the key, then the tables it leaves empty.
    for (int depth = keys.size(); depth > 0; --depth) {
      const QStringList parent = keys.mid(0, depth - 1);
      toml::node* node = const_cast<toml::node*>(find_node(impl_->root, parent));
      toml::table* table = node == nullptr ? nullptr : node->as_table();
      if (table == nullptr) break;
      const std::string key = keys[depth - 1].toStdString();
      const toml::node* child = table->get(key);
      if (depth < keys.size() && !(child && child->is_table() && child->as_table()->empty())) break;
      table->erase(key);
    }
    modified_ = true;
    return;
  }
  toml::table* table = &impl_->root;
  for (int i = 0; i + 1 < keys.size(); ++i) {
    const std::string key = keys[i].toStdString();
    toml::node* child = table->get(key);
    if (child == nullptr || !child->is_table()) {
      table->insert_or_assign(key, toml::table{});
      child = table->get(key);
    }
    impl_->note_added(keys.mid(0, i + 1));
    table = child->as_table();
  }
  impl_->note_added(keys);
  const QVariant old = this->value(keys);
  put_value(*table, keys.last().toStdString(), value);
  if (old != this->value(keys)) modified_ = true;
}

QStringList StudyDocument::keys(const QStringList& table) const {
  const toml::node* node = find_node(impl_->root, table);
  QStringList out;
  if (node == nullptr || !node->is_table()) return out;
  for (const auto& entry : impl_->ordered(*node->as_table(), table)) out << entry.first;
  return out;
}

QVariantMap StudyDocument::to_variant() const {
  return variant_of(impl_->root).toMap();
}

QVariant StudyDocument::effective_value(const QString& profile, const QString& section,
                                        const QString& key) const {
  if (overridden(profile, section, key))
    return value({QStringLiteral("profile"), profile, section, key});
  return value({section, key});
}

bool StudyDocument::overridden(const QString& profile, const QString& section,
                               const QString& key) const {
  return !profile.isEmpty() && contains({QStringLiteral("profile"), profile, section, key});
}

void StudyDocument::set_effective_value(const QString& profile, const QString& section,
                                        const QString& key, const QVariant& value) {
  if (overridden(profile, section, key))
    set_value({QStringLiteral("profile"), profile, section, key}, value);
  else
    set_value({section, key}, value);
}

QStringList StudyDocument::profiles() const {
  return keys({QStringLiteral("profile")});
}

QList<StudyDocument::SweepAxis> StudyDocument::sweep_axes() const {
  QList<SweepAxis> axes;
  const QStringList sweep = {QStringLiteral("sweep")};
  const toml::node* node = find_node(impl_->root, sweep);
  if (node == nullptr || !node->is_table()) return axes;
  for (const auto& [name, value] : impl_->ordered(*node->as_table(), sweep)) {
    if (name == QStringLiteral("zip") && value->is_array_of_tables()) {
      int index = 0;
      for (const toml::node& element : *value->as_array()) {
        SweepAxis axis;
        axis.zip = true;
        const QStringList element_keys = {QStringLiteral("sweep"), QStringLiteral("zip"),
                                          QStringLiteral("#%1").arg(index++)};
        for (const auto& [key, values] : impl_->ordered(*element.as_table(), element_keys)) {
          axis.keys << key;
          const QVariant list = variant_of(*values);
          axis.values << (list.typeId() == QMetaType::QVariantList ? list.toList()
                                                                   : QVariantList{list});
        }
        axes << axis;
      }
      continue;
    }
    SweepAxis axis;
    axis.keys << name;
    const QVariant list = variant_of(*value);
    axis.values << (list.typeId() == QMetaType::QVariantList ? list.toList() : QVariantList{list});
    axes << axis;
  }
  return axes;
}

void StudyDocument::set_sweep_axes(const QList<SweepAxis>& axes) {
  if (axes.isEmpty()) {
    if (contains({QStringLiteral("sweep")})) {
      impl_->root.erase("sweep");
      modified_ = true;
    }
    return;
  }
  const QVariantMap before = value({QStringLiteral("sweep")}).toMap();
  toml::table sweep;
  toml::array zips;
  impl_->note_added({QStringLiteral("sweep")});
  for (const SweepAxis& axis : axes) {
    if (!axis.zip) {
      for (int k = 0; k < axis.keys.size(); ++k) {
        put_value(sweep, axis.keys[k].toStdString(), axis.values.value(k));
        impl_->note_added({QStringLiteral("sweep"), axis.keys[k]});
      }
      continue;
    }
    const QStringList element_keys = {QStringLiteral("sweep"), QStringLiteral("zip"),
                                      QStringLiteral("#%1").arg(zips.size())};
    impl_->note_added(element_keys.mid(0, 2));
    impl_->note_added(element_keys);
    toml::table zip;
    for (int k = 0; k < axis.keys.size(); ++k) {
      put_value(zip, axis.keys[k].toStdString(), axis.values.value(k));
      impl_->note_added(QStringList(element_keys) << axis.keys[k]);
    }
    zips.push_back(std::move(zip));
  }
  if (!zips.empty()) sweep.insert_or_assign("zip", std::move(zips));
  impl_->root.insert_or_assign("sweep", std::move(sweep));
  if (before != value({QStringLiteral("sweep")}).toMap()) modified_ = true;
}

StudyDocument StudyDocument::with_absolute_paths(const QString& base_dir) const {
  StudyDocument copy(*this);
  QList<QStringList> tables = {{QStringLiteral("study")}};
  for (const QString& profile : profiles())
    tables << QStringList{QStringLiteral("profile"), profile, QStringLiteral("study")};
  const QDir base(base_dir);
  for (const QStringList& table : tables) {
    // A path relative to the config's folder made absolute; built-in source names stay.
    auto absolute = [&](const QString& path, bool source) {
      static const QStringList builtin = {QStringLiteral("builtin"), QStringLiteral("manpages"),
                                          QStringLiteral("python-docs"),
                                          QStringLiteral("kernel-docs")};
      if (path.isEmpty() || QDir::isAbsolutePath(path) || (source && builtin.contains(path)))
        return path;
      return QDir::cleanPath(base.absoluteFilePath(path));
    };
    for (const char* name : {"corpus", "dir", "db"}) {
      const QStringList keys = QStringList(table) << QString::fromLatin1(name);
      const QVariant v = copy.value(keys);
      const bool source = QLatin1String(name) == QLatin1String("corpus");
      if (v.typeId() == QMetaType::QString) {
        if (absolute(v.toString(), source) != v.toString())
          copy.set_value(keys, absolute(v.toString(), source));
      } else if (source && v.typeId() == QMetaType::QVariantList) {
        QVariantList sources;
        for (const QVariant& entry : v.toList()) sources << absolute(entry.toString(), true);
        if (sources != v.toList()) copy.set_value(keys, sources);
      }
    }
  }
  return copy;
}

QString StudyDocument::value_text(const QVariant& value) {
  toml::table holder;
  put_value(holder, "v", value);
  return node_text(*holder.get("v"));
}

QVariant StudyDocument::parse_value(const QString& text) {
  const std::string line = "v = " + text.toStdString();
  if (!toml_unsafe_text(line).empty()) return {};
  try {
    const toml::table table = toml::parse(line);
    const toml::node* node = table.get("v");
    return node == nullptr ? QVariant() : variant_of(*node);
  } catch (const toml::parse_error&) {
    return {};
  }
}

}  // namespace lmk::widgets

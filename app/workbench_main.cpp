// lmk-workbench: the Landmark Workbench GUI. Thin: options, the main window, screenshots.
//   lmk-workbench [--db FILE] [--explore FILE]... [--screenshot DIR]
#include <QApplication>
#include <QCommandLineParser>
#include <QFileInfo>
#include <QSettings>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTextStream>

#include <exception>
#include <memory>

#include "widgets/explorer_view.h"
#include "widgets/main_window.h"
#include "widgets/store_connection.h"

namespace {

// Whether argv holds `name` (as --name, or --name=...).
bool has_option(int argc, char** argv, const char* name) {
  const QByteArray flag = QByteArray("--") + name;
  for (int i = 1; i < argc; ++i) {
    const QByteArray arg(argv[i]);
    if (arg == flag || arg.startsWith(flag + '=')) return true;
  }
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  // Decided before Qt picks a display: --help and --version print and need none (a
  // QCoreApplication answers them), and --screenshot renders offscreen unless the user chose a
  // platform.
  const bool help = has_option(argc, argv, "help") || has_option(argc, argv, "help-all") ||
                    (argc > 1 && (QByteArray(argv[1]) == "-h" || QByteArray(argv[1]) == "-v")) ||
                    has_option(argc, argv, "version");
  if (has_option(argc, argv, "screenshot") && qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM"))
    qputenv("QT_QPA_PLATFORM", "offscreen");
#if defined(Q_OS_LINUX)
  // Without a display Qt's xcb plugin aborts (SIGABRT); say what is missing instead.
  if (!help && qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM") &&
      qEnvironmentVariableIsEmpty("DISPLAY") && qEnvironmentVariableIsEmpty("WAYLAND_DISPLAY")) {
    QTextStream(stderr) << "lmk-workbench: no display (neither DISPLAY nor WAYLAND_DISPLAY is "
                           "set): start it in a desktop session, or with "
                           "QT_QPA_PLATFORM=offscreen (--screenshot DIR renders every view "
                           "without one)\n";
    return 2;
  }
#endif
  std::unique_ptr<QCoreApplication> app;
  if (help) {
    app = std::make_unique<QCoreApplication>(argc, argv);
  } else {
    app = std::make_unique<QApplication>(argc, argv);
  }
  QApplication::setOrganizationName(QStringLiteral("lmk"));
  QApplication::setApplicationName(QStringLiteral("lmk-workbench"));
  QApplication::setApplicationVersion(QStringLiteral("0.1.0"));

  QCommandLineParser parser;
  parser.setApplicationDescription(QStringLiteral(
      "Landmark Workbench: design pooling studies, watch their jobs, browse results"));
  parser.addHelpOption();
  parser.addVersionOption();
  const QCommandLineOption db_option(
      QStringLiteral("db"), QStringLiteral("results store to open (default: the last one)"),
      QStringLiteral("FILE"));
  const QCommandLineOption screenshot_option(
      QStringLiteral("screenshot"),
      QStringLiteral("render every view to DIR/NN-view.png and exit (works offscreen)"),
      QStringLiteral("DIR"));
  const QCommandLineOption size_option(QStringLiteral("size"),
                                       QStringLiteral("window size for screenshots (1400x900)"),
                                       QStringLiteral("WxH"), QStringLiteral("1400x900"));
  const QCommandLineOption explore_option(
      QStringLiteral("explore"),
      QStringLiteral("open a file of lmk attention --explore in the Explorer view (repeat for CLS "
                     "and LMK of one document)"),
      QStringLiteral("FILE"));
  parser.addOptions({db_option, screenshot_option, size_option, explore_option});
  parser.process(*app);

  QTextStream err(stderr);
  // Screenshots show the defaults, not this user's recent files, columns or last study, and
  // leave the user's settings alone.
  QTemporaryDir screenshot_settings;
  if (parser.isSet(screenshot_option)) {
    QSettings::setDefaultFormat(QSettings::IniFormat);
    QSettings::setPath(QSettings::IniFormat, QSettings::UserScope, screenshot_settings.path());
  }
  QString db = parser.value(db_option);
  // A missing store stops screenshots (exit 2); on the desktop the window opens and says so
  // (MainWindow::open_store: the status bar and a message box).
  if (!db.isEmpty() && !QFileInfo(db).isFile()) {
    err << "lmk-workbench: " << db << ": no such results store" << Qt::endl;
    if (parser.isSet(screenshot_option)) return 2;
  }
  if (db.isEmpty() && !parser.isSet(screenshot_option)) {
    const QStringList recent = QSettings().value(QStringLiteral("recent_stores")).toStringList();
    if (!recent.isEmpty() && QFileInfo(recent.first()).isFile()) db = recent.first();
  }

  if (!db.isEmpty() && QFileInfo(db).isFile()) {
    try {
      lmk::widgets::store_connection(db);
    } catch (const lmk::widgets::StoreError& e) {
      err << "lmk-workbench: " << e.what() << "\n";
      if (parser.isSet(screenshot_option)) return 2;
    }
  }

  const QStringList explore = parser.values(explore_option);
  for (const QString& path : explore)
    if (!QFileInfo(path).isFile()) {
      err << "lmk-workbench: --explore " << path << ": no such file\n";
      return 2;
    }

  lmk::widgets::MainWindow window;
  if (parser.isSet(screenshot_option)) {
    const QStringList size = parser.value(size_option).split('x');
    if (size.size() != 2 || size[0].toInt() < 200 || size[1].toInt() < 200) {
      err << "lmk-workbench: --size " << parser.value(size_option)
          << ": expected WxH, e.g. 1400x900\n";
      return 2;
    }
    window.resize(size[0].toInt(), size[1].toInt());
  }
  window.show();
  if (!db.isEmpty()) window.open_store(db);
  if (parser.isSet(db_option)) window.show_results();  // a store named: its results first
  if (!explore.isEmpty()) {
    lmk::widgets::ExplorerView* explorer = window.explorer();
    for (const QString& path : explore) explorer->open_file(path);
    window.tabs()->setCurrentWidget(explorer);
  }
  if (!parser.isSet(screenshot_option)) return QApplication::exec();

  try {
    for (const QString& path : window.save_screenshots(parser.value(screenshot_option)))
      QTextStream(stdout) << path << "\n";
  } catch (const std::exception& e) {
    err << "lmk-workbench: " << e.what() << "\n";
    return 2;
  }
  return 0;
}

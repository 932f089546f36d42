//! The HTML timeline and the explorer in a real browser (Debian's chromium, headless, driven
//! through chromedriver): the pages load with nothing from the network, the keyboard and the
//! mouse step through a known trace, and the page shows what the trace says (the waiting
//! client, the holder, the violation). A screenshot of each is kept in the test's output
//! directory. Run with `cargo test --release --test browser`.

use fantoccini::key::Key;
use fantoccini::{Client, ClientBuilder, Locator};
use hyper_util::client::legacy::connect::HttpConnector;
use std::io::{BufRead, BufReader};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use zklab::trace::Trace;

const TRACE: &str = "traces/wait-on-null-n2-eventual_acquire.json";

/// A child process killed when the test is done with it.
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Where the screenshots go: the test's own output directory.
fn shots() -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("browser");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// chromedriver on a free local port, and a headless chromium session through it.
async fn browser() -> (Running, Client) {
    let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let driver = Command::new("chromedriver")
        .arg(format!("--port={port}"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("chromedriver runs (Debian: apt-get install chromium chromium-driver)");
    let driver = Running(driver);
    let mut capabilities = serde_json::Map::new();
    let mut options = serde_json::json!({
        "args": ["--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1400,900"]
    });
    if Path::new("/usr/bin/chromium").exists() {
        options["binary"] = "/usr/bin/chromium".into();
    }
    capabilities.insert("goog:chromeOptions".to_string(), options);
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let connected = ClientBuilder::new(HttpConnector::new())
            .capabilities(capabilities.clone())
            .connect(&format!("http://127.0.0.1:{port}"))
            .await;
        match connected {
            Ok(client) => return (driver, client),
            Err(e) if Instant::now() > deadline => panic!("no browser session: {e}"),
            Err(_) => tokio::time::sleep(Duration::from_millis(200)).await,
        }
    }
}

/// `zklab explore` with `args`, and the address it serves on.
fn explore(args: &[&str]) -> (Running, String) {
    let mut child =
        Command::new(env!("CARGO_BIN_EXE_zklab")).arg("explore").args(args).stdout(Stdio::piped()).spawn().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let url = lines.find_map(|l| l.unwrap().split_once("http://").map(|(_, r)| format!("http://{r}"))).unwrap();
    let url = url.split(' ').next().unwrap().to_string();
    (Running(child), url)
}

async fn text(client: &Client, css: &str) -> String {
    client.wait().at_most(Duration::from_secs(10)).for_element(Locator::Css(css)).await.unwrap().text().await.unwrap()
}

async fn count(client: &Client, css: &str) -> usize {
    client.find_all(Locator::Css(css)).await.unwrap().len()
}

async fn press(client: &Client, key: Key) {
    client.find(Locator::Css("body")).await.unwrap().send_keys(&key).await.unwrap();
}

fn run<F: std::future::Future<Output = ()>>(test: F) {
    tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(test);
}

#[test]
fn the_timeline_steps_through_the_wait_on_null_deadlock() {
    run(async {
        let trace = Trace::load(&root().join(TRACE)).unwrap();
        let page = root().join("docs/timelines/wait-on-null-n2-eventual_acquire.html");
        let (_driver, client) = browser().await;
        client.goto(&format!("file://{}", page.display())).await.unwrap();
        // It opens on the last step, where the violation is.
        let last = trace.steps.len();
        assert!(text(&client, "#step-title").await.starts_with(&format!("step {last}:")));
        assert!(text(&client, "#violation").await.contains("eventual_acquire is violated here"));
        assert_eq!(count(&client, "#clients tr[data-belief=acquiring]").await, 1, "c1 still waits");
        let waiting = text(&client, "#nodes tbody").await;
        assert!(
            waiting.contains("c0-s2-lock-0000000000 no node c1 (data)"),
            "c1 watches a node that is gone: {waiting}"
        );
        std::fs::write(shots().join("timeline-violation.png"), client.screenshot().await.unwrap()).unwrap();
        // The keyboard: Home goes to the start, the arrow one step on.
        press(&client, Key::Home).await;
        assert_eq!(text(&client, "#step-title").await, "the initial state");
        assert_eq!(count(&client, "#violation").await, 0, "nothing is violated at the start");
        press(&client, Key::Down).await;
        assert!(text(&client, "#step-title").await.starts_with("step 1: acquire c0"));
        // The mouse: a row is a step. After step 3, c0 holds the lock.
        client.find(Locator::Css(r#"rect[data-frame="3"]"#)).await.unwrap().click().await.unwrap();
        assert!(text(&client, "#step-title").await.starts_with("step 3:"));
        assert_eq!(count(&client, "#clients tr[data-belief=holding]").await, 1, "c0 holds after step 3");
        assert!(client.current_url().await.unwrap().as_str().ends_with("#frame=3"), "the step is in the address");
        std::fs::write(shots().join("timeline-step3.png"), client.screenshot().await.unwrap()).unwrap();
        client.close().await.unwrap();
    });
}

#[test]
fn the_explorer_is_broken_by_clicking_the_shortest_trace_and_undo_mends_it() {
    run(async {
        let trace = Trace::load(&root().join(TRACE)).unwrap();
        let (_explore, url) = explore(&["--recipe", "wait-on-null", "--clients", "2"]);
        let (_driver, client) = browser().await;
        client.goto(&url).await.unwrap();
        let goal = text(&client, "#goal").await;
        assert!(goal.contains(&format!("the shortest way takes {} steps", trace.steps.len())), "{goal}");
        // The learner clicks the trace's steps one by one, each among the enabled ones.
        for (i, step) in trace.steps.iter().enumerate() {
            let data = serde_json::to_string(step).unwrap();
            let css = format!("#enabled button[data-step='{data}']");
            let button = client.wait().at_most(Duration::from_secs(10)).for_element(Locator::Css(&css)).await.unwrap();
            button.click().await.unwrap();
            let taken = i + 1;
            client
                .wait()
                .at_most(Duration::from_secs(10))
                .for_element(Locator::Css(&format!("#history li:nth-child({taken})")))
                .await
                .unwrap();
        }
        let broken = text(&client, "#goal.broken").await;
        assert!(broken.contains(&format!("eventual_acquire after {} steps", trace.steps.len())), "{broken}");
        assert!(text(&client, "#deadlock").await.contains("nothing but a fault can happen"));
        assert_eq!(count(&client, "#clients tr[data-belief=acquiring]").await, 1, "c1 still waits");
        std::fs::write(shots().join("explorer-broken.png"), client.screenshot().await.unwrap()).unwrap();
        // Undo: the position before the last step breaks nothing.
        client.find(Locator::Css("#undo")).await.unwrap().click().await.unwrap();
        client.wait().at_most(Duration::from_secs(10)).for_element(Locator::Css("#goal:not(.broken)")).await.unwrap();
        assert!(text(&client, "#goal").await.starts_with("Break it"));
        client.close().await.unwrap();
    });
}

#[test]
fn a_loaded_trace_is_stepped_back_and_forth_in_the_explorer() {
    run(async {
        let trace = Trace::load(&root().join(TRACE)).unwrap();
        let (_explore, url) = explore(&["--trace", root().join(TRACE).to_str().unwrap()]);
        let (_driver, client) = browser().await;
        client.goto(&url).await.unwrap();
        // It opens at the trace's end, broken.
        assert!(text(&client, "#goal.broken").await.contains("eventual_acquire"));
        assert_eq!(text(&client, "#count").await, trace.steps.len().to_string());
        // Back to the third step, then forward along the trace with `n`.
        client.find(Locator::Css("#history li:nth-child(3)")).await.unwrap().click().await.unwrap();
        client.wait().at_most(Duration::from_secs(10)).for_element(Locator::Css("#goal:not(.broken)")).await.unwrap();
        assert_eq!(text(&client, "#count").await, "3");
        client.find(Locator::Css("body")).await.unwrap().send_keys("n").await.unwrap();
        client
            .wait()
            .at_most(Duration::from_secs(10))
            .for_element(Locator::Css("#history li:nth-child(4)"))
            .await
            .unwrap();
        assert_eq!(text(&client, "#count").await, "4");
        for taken in 5..=trace.steps.len() {
            client.find(Locator::Css("#next")).await.unwrap().click().await.unwrap();
            let css = format!("#history li:nth-child({taken})");
            client.wait().at_most(Duration::from_secs(10)).for_element(Locator::Css(&css)).await.unwrap();
        }
        assert!(text(&client, "#goal.broken").await.contains("eventual_acquire"), "the trace's end again");
        std::fs::write(shots().join("explorer-trace.png"), client.screenshot().await.unwrap()).unwrap();
        client.close().await.unwrap();
    });
}

/// `trace`'s HTML timeline, written under the test's output directory.
fn timeline_page(trace: &str) -> PathBuf {
    let page = shots().join(Path::new(trace).with_extension("html").file_name().unwrap());
    std::fs::write(&page, zklab::html::render(&Trace::load(&root().join(trace)).unwrap()).unwrap()).unwrap();
    page
}

#[test]
fn the_herd_is_drawn_as_a_fan_and_a_belief_change_is_never_cut_short() {
    run(async {
        let (_driver, client) = browser().await;
        // The naive lock's release wakes both waiters: two event arrows leave the server at it.
        client.goto(&format!("file://{}", timeline_page("traces/naive-n3-no_herd.json").display())).await.unwrap();
        let fan = client.find_all(Locator::Css("path.arrow-event[data-to]")).await.unwrap();
        let mut woken = Vec::new();
        for arrow in fan {
            woken.push(arrow.attr("data-to").await.unwrap().unwrap());
        }
        assert_eq!(woken, ["2", "3"], "one curve from the server to c1's lane and one to c2's");
        std::fs::write(shots().join("timeline-herd.png"), client.screenshot().await.unwrap()).unwrap();
        // Connection loss: each label that ends in a new belief shows that belief whole.
        let page = timeline_page("traces/release-under-connloss-n2-eventual_acquire.json");
        client.goto(&format!("file://{}", page.display())).await.unwrap();
        let labels = client.find_all(Locator::Css("text.step-label")).await.unwrap();
        let mut changes = 0;
        for label in labels {
            let shown = label.text().await.unwrap();
            let whole = label.find(Locator::Css("title")).await.unwrap().html(true).await.unwrap();
            if let Some((_, change)) = whole.split_once(" → ") {
                changes += 1;
                assert!(shown.ends_with(&format!("→ {change}")), "{shown:?} cuts {whole:?}");
            }
        }
        assert!(changes >= 2, "the trace changes beliefs");
        // The explorer draws the release's fan too.
        let (_explore, url) = explore(&["--trace", root().join("traces/naive-n3-no_herd.json").to_str().unwrap()]);
        client.goto(&url).await.unwrap();
        client.wait().at_most(Duration::from_secs(10)).for_element(Locator::Css("#fan path.notified")).await.unwrap();
        assert_eq!(count(&client, "#fan path.notified").await, 2, "c1 and c2 woken at once");
        std::fs::write(shots().join("explorer-herd.png"), client.screenshot().await.unwrap()).unwrap();
        client.close().await.unwrap();
    });
}

#[test]
fn every_level_of_the_lessons_is_played_to_its_end() {
    run(async {
        let (_explore, url) = explore(&["--lessons"]);
        let base = url.trim_end_matches('/').to_string();
        let (_driver, client) = browser().await;
        client.goto(&url).await.unwrap();
        assert_eq!(count(&client, "#levels li").await, zklab::explore::LESSONS.len());
        for (i, lesson) in zklab::explore::LESSONS.iter().enumerate() {
            // Each level opened from the one before (the first from the index), as a learner would.
            let link =
                if i == 0 { format!("#levels li[data-level='{}'] a", lesson.id) } else { "#next-level".to_string() };
            client.find(Locator::Css(&link)).await.unwrap().click().await.unwrap();
            client
                .wait()
                .at_most(Duration::from_secs(10))
                .for_url(&format!("{base}/lesson/{}/", lesson.id).parse().unwrap())
                .await
                .unwrap();
            assert_eq!(text(&client, "#task").await, lesson.task);
            let trace = lesson.trace();
            for (taken, step) in trace.steps.iter().enumerate() {
                let css = format!("#enabled button[data-step='{}']", serde_json::to_string(step).unwrap());
                let button =
                    client.wait().at_most(Duration::from_secs(10)).for_element(Locator::Css(&css)).await.unwrap();
                button.click().await.unwrap();
                let done = format!("#history li:nth-child({})", taken + 1);
                client.wait().at_most(Duration::from_secs(10)).for_element(Locator::Css(&done)).await.unwrap();
            }
            let property = trace.verdict.property.name();
            assert!(text(&client, "#goal.broken").await.contains(property), "{}: broken", lesson.id);
            let found = text(&client, "#found").await;
            assert!(found.contains(lesson.id) && found.contains("The kept trace"), "{}: {found}", lesson.id);
            std::fs::write(shots().join(format!("lesson-{}.png", lesson.id)), client.screenshot().await.unwrap())
                .unwrap();
            let href = client.find(Locator::Css("#trace-link")).await.unwrap().prop("href").await.unwrap().unwrap();
            assert_eq!(href, format!("{base}/lesson/{}/trace.html", lesson.id));
            let last = i + 1 == zklab::explore::LESSONS.len();
            assert_eq!(count(&client, "#next-level").await, usize::from(!last), "{}", lesson.id);
        }
        // The last level's kept trace opens as its timeline.
        client.find(Locator::Css("#trace-link")).await.unwrap().click().await.unwrap();
        assert!(text(&client, "#violation").await.contains("is violated here"));
        client.close().await.unwrap();
    });
}

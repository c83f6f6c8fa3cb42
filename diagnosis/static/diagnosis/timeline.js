/*
 * The session timeline on a session's page (templates/admin/diagnosis/timeline.html), run
 * right after it.
 */
(function () {
  var timeline = document.getElementById("session-timeline");
  if (!timeline) return;
  // Each row's indent (its depth in the trace) and its bar's place on the time scale come
  // as data attributes and are set through the DOM: the page's Content-Security-Policy
  // refuses style attributes written in the HTML.
  timeline.querySelectorAll(".label[data-depth]").forEach(function (label) {
    label.style.paddingLeft = label.dataset.depth + "rem";
  });
  timeline.querySelectorAll(".bar[data-offset]").forEach(function (bar) {
    bar.style.left = bar.dataset.offset + "%";
    bar.style.width = bar.dataset.width + "%";
  });
  // A span's attributes are read when its row is first opened (feedback/admin/timeline.py).
  timeline.addEventListener("toggle", function (event) {
    var box = event.target.open && event.target.querySelector(":scope > .attributes-box");
    if (!box || box.dataset.state) return;
    box.dataset.state = "loading";
    box.textContent = "…";
    fetch(timeline.dataset.spansUrl + box.dataset.span + "/attributes/", {credentials: "same-origin", headers: {"Accept": "text/html"}})
      .then(function (response) { if (!response.ok || response.redirected) throw new Error(response.status); return response.text(); })
      .then(function (html) { box.innerHTML = html; box.dataset.state = "loaded"; })
      .catch(function () { box.textContent = timeline.dataset.unreadable; delete box.dataset.state; });
  }, true);
})();

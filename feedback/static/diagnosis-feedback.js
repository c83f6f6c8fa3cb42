/*
 * diagnosis-feedback.js: the "was this answer useful?" widget for a chat page.
 *
 * One file, no build step, no dependency. Served at /static/diagnosis-feedback.js: by
 * the service under `make run`, in production by the proxy from `collectstatic`'s output.
 *
 *   <div id="diagnosis-feedback"></div>
 *   <script src="https://diagnosis.example.com/static/diagnosis-feedback.js"></script>
 *   <script>DiagnosisFeedback.mount(document.getElementById("diagnosis-feedback"),
 *     {endpoint: "https://diagnosis.example.com/api/feedback", sessionId: "...",
 *      token: "...", lang: "zh"});</script>
 *
 * `token` is the session's `feedbackToken` (from the agent's `complete` call); the page's
 * origin must be in the service's CORS_ALLOWED_ORIGINS. No cookie is sent.
 *
 * Optional: `timeout` (milliseconds, default 15000): a submission the service has not
 * answered by then ends in the "could not reach the service" message with its retry
 * button, instead of "sending…" forever. `onSuccess(feedback, reply)`: called once the
 * service has recorded it, with the verdict sent and the service's reply
 * ({success, message, caseId}). `onError(kind, serverMessage)`: called on each failure.
 *
 * "Useful" sends at once; "Not useful" opens a form (a reason, a comment, a correction).
 * Once recorded, the widget shows the verdict with "Change", which brings the buttons
 * back (the service keeps the last verdict), and after "useful" an "Add a comment" box,
 * sent as `useful` with a `comment` (never a `reason`: the service refuses one with
 * `useful`).
 *
 * Its styles go in a constructed stylesheet adopted by the document, which a page's
 * Content-Security-Policy style-src does not govern: a page that allows styles only from
 * itself still shows the widget as drawn here.
 */
(function (global) {
  "use strict";

  var REASONS = ["wrong_root_cause", "missing_evidence", "outdated", "not_actionable", "other"];
  var COMMENT_MAX = 2000;
  var CORRECTION_MAX = 10000;
  var TIMEOUT_MS = 15000;

  var TEXT = {
    zh: {
      question: "这个回答有帮助吗？",
      useful: "有用",
      notUseful: "没用",
      reasonLegend: "哪里不对？",
      reasons: {
        wrong_root_cause: "根因不对",
        missing_evidence: "缺少证据",
        outdated: "内容过时",
        not_actionable: "无法执行",
        other: "其他"
      },
      comment: "补充说明（可选）",
      correction: "正确的根因或处理办法（可选）",
      submit: "提交反馈",
      cancel: "取消",
      sending: "正在提交…",
      thanks: "感谢反馈，已记录。",
      thanksNotUseful: "感谢反馈，运维同学会复核这个回答。",
      thanksComment: "感谢补充，说明已记录。",
      ratedUseful: "已评价：有用",
      ratedNotUseful: "已评价：没用",
      change: "修改",
      addComment: "添加说明",
      noteLabel: "说明",
      sendNote: "提交说明",
      remaining: "还可输入 {n} 字",
      cut: "已截断为 {n} 字",
      chooseReason: "请选择一个原因。",
      errors: {
        forbidden: "反馈链接无效或已过期，请刷新页面后重试。",
        httpsRequired: "反馈服务需要 HTTPS：请联系页面维护者。",
        throttled: "提交太频繁，请稍后再试。",
        throttledFor: "提交太频繁，请 {n} 秒后再试。",
        conflict: "这个会话现在不能接受这个反馈：它还在执行中，或者没有答案。",
        running: "会话仍在执行中，执行结束后才能反馈。",
        noAnswer: "这个会话没有答案，不能标记为有用。",
        notFound: "找不到这个会话。",
        invalid: "提交的内容有误。",
        network: "无法连接反馈服务，请检查网络后重试。",
        server: "反馈服务出错了，请稍后重试。"
      },
      retry: "重试"
    },
    en: {
      question: "Was this answer useful?",
      useful: "Useful",
      notUseful: "Not useful",
      reasonLegend: "What was wrong?",
      reasons: {
        wrong_root_cause: "Wrong root cause",
        missing_evidence: "Missing evidence",
        outdated: "Outdated",
        not_actionable: "Not actionable",
        other: "Other"
      },
      comment: "Comment (optional)",
      correction: "The right root cause or fix (optional)",
      submit: "Send feedback",
      cancel: "Cancel",
      sending: "Sending…",
      thanks: "Thank you: your feedback is recorded.",
      thanksNotUseful: "Thank you: the operations team will review this answer.",
      thanksComment: "Thank you: your comment is recorded.",
      ratedUseful: "You rated this answer useful",
      ratedNotUseful: "You rated this answer not useful",
      change: "Change",
      addComment: "Add a comment",
      noteLabel: "Your comment",
      sendNote: "Send comment",
      remaining: "{n} characters left",
      cut: "Cut to {n} characters",
      chooseReason: "Please choose a reason.",
      errors: {
        forbidden: "This feedback link is invalid or has expired. Reload the page and try again.",
        httpsRequired: "The feedback service requires HTTPS: please contact the maintainer of this page.",
        throttled: "Too many attempts. Please wait a moment and try again.",
        throttledFor: "Too many attempts. Please wait {n} s and try again.",
        conflict: "This session cannot take this feedback: it is still running, or it has no answer.",
        running: "This session is still running: you can rate it once it has finished.",
        noAnswer: "This session has no answer, so it cannot be rated useful.",
        notFound: "This session was not found.",
        invalid: "The feedback was not accepted.",
        network: "Could not reach the feedback service. Check your connection and try again.",
        server: "The feedback service failed. Please try again later."
      },
      retry: "Try again"
    }
  };

  var STYLE_ID = "diagnosis-feedback-style";
  var CSS =
    // Light, whatever the page around it: its text keeps its contrast on a dark page.
    ".dfb{font:14px/1.5 system-ui,sans-serif;color:#1f2328;background:#fff;" +
    "color-scheme:light;border:1px solid #d0d7de;" +
    "border-radius:6px;padding:12px;max-width:36em}" +
    ".dfb button{font:inherit;padding:4px 12px;margin:0 8px 0 0;border:1px solid #8c959f;" +
    "border-radius:4px;background:#f6f8fa;cursor:pointer}" +
    ".dfb button:focus-visible,.dfb input:focus-visible,.dfb textarea:focus-visible" +
    "{outline:2px solid #0969da;outline-offset:2px}" +
    ".dfb button[disabled]{opacity:.6;cursor:default}" +
    ".dfb fieldset{border:0;margin:8px 0;padding:0}" +
    ".dfb legend{font-weight:600;margin-bottom:4px}" +
    ".dfb fieldset label{display:inline-block;margin:0 12px 4px 0}" +
    ".dfb .dfb-field{display:block;margin:8px 0}" +
    ".dfb textarea{display:block;width:100%;box-sizing:border-box;font:inherit;margin-top:4px}" +
    ".dfb .dfb-count{color:#57606a;font-size:12px}" +
    ".dfb .dfb-status{margin-top:8px}" +
    ".dfb .dfb-success{color:#1a7f37}" +
    ".dfb .dfb-error{color:#cf222e}" +
    ".dfb .dfb-retry{margin-top:8px}" +
    ".dfb .dfb-verdict{margin-top:8px}" +
    ".dfb .dfb-verdict span{margin-right:12px}" +
    ".dfb .dfb-note{margin:4px 0;color:#57606a;font-size:12px}";

  // Marks the constructed sheet, so that a second widget (or a second copy of this
  // script) on the page finds it instead of adding another.
  var SHEET_MARK = "diagnosisFeedback";

  // A constructed stylesheet, where the browser has them: an inline <style> is refused by
  // a page whose CSP has a style-src without 'unsafe-inline', and the widget would show
  // unstyled. Adopted sheets come after the page's own in the cascade, so a page restyles
  // the widget with selectors more specific than the ones below. Older browsers get the
  // <style> element.
  function addStyle(doc) {
    var view = doc.defaultView;
    var Sheet = view && view.CSSStyleSheet;
    if (Sheet && "replaceSync" in Sheet.prototype && "adoptedStyleSheets" in doc) {
      try {
        var sheets = Array.prototype.slice.call(doc.adoptedStyleSheets);
        var added = sheets.some(function (adopted) {
          return adopted[SHEET_MARK] === true;
        });
        if (added) return;
        // Made with the document's own constructor: a sheet is adopted only by the
        // document it was made for (the element may be in a frame).
        var sheet = new Sheet();
        sheet.replaceSync(CSS);
        sheet[SHEET_MARK] = true;
        sheets.push(sheet);
        doc.adoptedStyleSheets = sheets;
        return;
      } catch (error) {
        // A browser that lists the API but refuses it: the <style> element below.
      }
    }
    if (doc.getElementById(STYLE_ID)) return;
    var style = doc.createElement("style");
    style.id = STYLE_ID;
    style.textContent = CSS;
    (doc.head || doc.documentElement).appendChild(style);
  }

  function el(doc, tag, attrs, children) {
    var node = doc.createElement(tag);
    Object.keys(attrs || {}).forEach(function (name) {
      if (name === "text") node.textContent = attrs[name];
      else node.setAttribute(name, attrs[name]);
    });
    (children || []).forEach(function (child) {
      node.appendChild(child);
    });
    return node;
  }

  // A retry can help only where the failure was on the way or for the moment (a session
  // still running finishes); a refused token, a bad body, an unknown session or a session
  // with no answer stay as they are.
  var RETRYABLE = { network: true, throttled: true, server: true, running: true };

  // The service answers in Chinese only. Where its words say more than the widget's own
  // (which field a 400 or 413 refused; whether a 409's session is still running or has no
  // answer), a Chinese page shows them. Elsewhere both languages show the widget's own
  // text: a refused token (401, 403: forged, another session's, expired, or signed with
  // a key since changed) asks the reader to reload the page, which the service's words
  // do not all say; a 429's words carry no wait (the widget tells it from Retry-After,
  // which the service exposes to other origins); 404 and 5xx say nothing more.
  var SERVER_WORDS = { invalid: true, conflict: true };

  // The service's message when a page calls it at http:// and it takes HTTPS only (403,
  // config/https_required.py). A reload would not help there, as it does for a refused
  // token: the page's endpoint must change. The feedback contract's error body has no
  // `code`, so its message tells the two apart; a body with a `code` says it outright.
  var HTTPS_REQUIRED = "只接受 HTTPS 请求，请把地址改为 https:// 开头";

  // A 409's two causes, told apart by the service's message in the same way
  // (feedback/services.py): a session still running, or one with no answer.
  var CONFLICTS = {
    "会话仍在执行中，执行结束后才能反馈。": "running",
    "这个会话没有答案，不能标记为有用。": "noAnswer"
  };

  function errorKind(status, data) {
    if (status === 403 && data && (data.code === "https_required" || data.message === HTTPS_REQUIRED)) {
      return "httpsRequired";
    }
    if (status === 401 || status === 403) return "forbidden";
    if (status === 429) return "throttled";
    if (status === 409) return "conflict";
    if (status === 404) return "notFound";
    if (status === 400 || status === 413) return "invalid";
    return "server";
  }

  // Seconds to wait, from a 429's Retry-After: the service sends a whole number of
  // seconds; a date, or no header (a page's origin reads only exposed headers), gives "".
  function retryAfter(response) {
    var value = response.status === 429 ? response.headers.get("Retry-After") : null;
    return value && /^\s*\d+\s*$/.test(value) && Number(value) > 0 ? String(Number(value)) : "";
  }

  var counter = 0;

  function mount(element, options) {
    if (!element || !element.ownerDocument) {
      throw new Error("DiagnosisFeedback.mount: an element is required");
    }
    options = options || {};
    ["endpoint", "sessionId", "token"].forEach(function (name) {
      if (!options[name]) throw new Error("DiagnosisFeedback.mount: options." + name + " is required");
    });
    var lang = String(options.lang || "zh").toLowerCase().indexOf("en") === 0 ? "en" : "zh";
    var t = TEXT[lang];
    var doc = element.ownerDocument;
    var id = "dfb-" + ++counter;
    addStyle(doc);

    var question = el(doc, "p", { id: id + "-q", text: t.question });
    var usefulButton = el(doc, "button", { type: "button", "data-feedback": "useful", text: t.useful });
    var notUsefulButton = el(doc, "button", {
      type: "button",
      "data-feedback": "not_useful",
      "aria-expanded": "false",
      "aria-controls": id + "-form",
      text: t.notUseful
    });
    var choice = el(doc, "div", {}, [usefulButton, notUsefulButton]);

    // Where a form says what it did to the reader's text (a paste cut at the limit): a
    // polite live region of its own, there from the start, so that it is read out.
    function formNote() {
      return el(doc, "p", { class: "dfb-note", "aria-live": "polite" });
    }

    function number(n) {
      return lang === "en" ? String(n).replace(/\B(?=(\d{3})+$)/g, ",") : String(n);
    }

    function textBox(name, label, max, note) {
      var area = el(doc, "textarea", {
        id: id + "-" + name,
        name: name,
        rows: "3",
        // maxlength counts UTF-16 units, in which a character past U+FFFF (an emoji) is
        // two; the service counts characters. Room for `max` of any kind here, and
        // update() cuts at `max` characters.
        maxlength: String(2 * max),
        "aria-describedby": id + "-" + name + "-count"
      });
      // Not a live region: a screen reader reads it with the box (its description), not
      // after every keystroke.
      var count = el(doc, "span", { id: id + "-" + name + "-count", class: "dfb-count" });
      var cutText = t.cut.replace("{n}", number(max));
      function update() {
        var chars = Array.from(area.value);
        if (chars.length > max) {
          area.value = chars.slice(0, max).join("");
          // Said once, in the form's live region: the counter alone is read only with
          // the box, and a paste cut short would otherwise go unnoticed.
          note.textContent = cutText;
        } else if (chars.length < max && note.textContent === cutText) {
          note.textContent = "";
        }
        count.textContent = t.remaining.replace("{n}", String(max - Math.min(chars.length, max)));
      }
      area.addEventListener("input", update);
      update();
      var wrapper = el(doc, "label", { class: "dfb-field", for: id + "-" + name }, [
        doc.createTextNode(label),
        area
      ]);
      return { node: el(doc, "div", {}, [wrapper, count]), area: area, update: update };
    }

    // The "not useful" details: reasons, comment, correction.
    var radios = REASONS.map(function (reason) {
      var input = el(doc, "input", { type: "radio", name: id + "-reason", value: reason });
      return el(doc, "label", {}, [input, doc.createTextNode(" " + t.reasons[reason])]);
    });
    var reasons = el(doc, "fieldset", {}, [el(doc, "legend", { text: t.reasonLegend })].concat(radios));
    var formNoteNode = formNote();
    var comment = textBox("comment", t.comment, COMMENT_MAX, formNoteNode);
    var correction = textBox("correction", t.correction, CORRECTION_MAX, formNoteNode);
    var submitButton = el(doc, "button", { type: "submit", text: t.submit });
    var cancelButton = el(doc, "button", { type: "button", text: t.cancel });
    var form = el(doc, "form", { id: id + "-form", hidden: "hidden", novalidate: "novalidate" }, [
      reasons,
      comment.node,
      correction.node,
      formNoteNode,
      el(doc, "div", {}, [submitButton, cancelButton])
    ]);

    // Once a verdict is recorded: what it is, a comment to add after "useful", and
    // "Change", which brings the two buttons back.
    var verdictText = el(doc, "span");
    var addCommentButton = el(doc, "button", {
      type: "button",
      "aria-expanded": "false",
      "aria-controls": id + "-note-form",
      text: t.addComment
    });
    var changeButton = el(doc, "button", { type: "button", text: t.change });
    var verdict = el(doc, "div", { class: "dfb-verdict", hidden: "hidden" }, [
      verdictText,
      addCommentButton,
      changeButton
    ]);
    var noteFormNote = formNote();
    var note = textBox("note", t.noteLabel, COMMENT_MAX, noteFormNote);
    var noteSubmit = el(doc, "button", { type: "submit", text: t.sendNote });
    var noteCancel = el(doc, "button", { type: "button", text: t.cancel });
    var noteForm = el(doc, "form", { id: id + "-note-form", hidden: "hidden", novalidate: "novalidate" }, [
      note.node,
      noteFormNote,
      el(doc, "div", {}, [noteSubmit, noteCancel])
    ]);

    // Two live regions, both present from the start and never changing role (a region
    // that turns from status into alert when its text changes is not reliably read): the
    // status for progress and thanks, the alert for errors. The retry button sits after
    // them, so it is not read out as part of the message; the recorded verdict after
    // that, so that Tab from the thanks (focused) reaches "Add a comment" and "Change".
    var status = el(doc, "div", { class: "dfb-status", role: "status", "aria-live": "polite", tabindex: "-1" });
    var alertBox = el(doc, "div", { id: id + "-alert", class: "dfb-status dfb-error", role: "alert", tabindex: "-1" });
    var retry = el(doc, "button", { type: "button", class: "dfb-retry", hidden: "hidden", text: t.retry });
    var root = el(doc, "div", { class: "dfb", role: "group", "aria-labelledby": id + "-q", lang: lang === "zh" ? "zh-CN" : "en" }, [
      question,
      choice,
      form,
      status,
      alertBox,
      retry,
      verdict,
      noteForm
    ]);
    element.innerHTML = "";
    element.appendChild(root);

    var busy = false;
    var lastBody = null;
    var timeout = Number(options.timeout) > 0 ? Number(options.timeout) : TIMEOUT_MS;

    function setBusy(value) {
      busy = value;
      root.setAttribute("aria-busy", value ? "true" : "false");
      Array.prototype.forEach.call(root.querySelectorAll("button"), function (b) {
        b.disabled = value;
      });
    }

    // "Choose a reason": the reason group marked invalid and described by the message,
    // until a reason is chosen or another message replaces it.
    function askForReason(asking) {
      if (asking) {
        reasons.setAttribute("aria-invalid", "true");
        reasons.setAttribute("aria-describedby", alertBox.id);
      } else {
        reasons.removeAttribute("aria-invalid");
        reasons.removeAttribute("aria-describedby");
      }
    }

    function show(kind, message, withRetry) {
      var error = kind === "error";
      askForReason(false);
      status.className = "dfb-status" + (kind && !error ? " dfb-" + kind : "");
      status.textContent = error ? "" : message;
      alertBox.textContent = error ? message : "";
      retry.hidden = !withRetry;
    }

    retry.addEventListener("click", function () {
      send(lastBody);
    });

    function setFormOpen(open) {
      form.hidden = !open;
      notUsefulButton.setAttribute("aria-expanded", open ? "true" : "false");
    }

    function openForm(open) {
      setFormOpen(open);
      if (open) radios[0].querySelector("input").focus();
      else notUsefulButton.focus();
    }

    function setNoteOpen(open) {
      noteForm.hidden = !open;
      addCommentButton.setAttribute("aria-expanded", open ? "true" : "false");
    }

    function openNote(open) {
      setNoteOpen(open);
      (open ? note.area : addCommentButton).focus();
    }

    function finished(body, reply) {
      var useful = body.feedback === "useful";
      choice.hidden = true;
      setFormOpen(false);
      setNoteOpen(false);
      if (body.comment && useful) {
        note.area.value = "";
        note.update();
      }
      verdictText.textContent = useful ? t.ratedUseful : t.ratedNotUseful;
      // The not-useful form had its own comment box.
      addCommentButton.hidden = !useful;
      verdict.hidden = false;
      show("success", useful ? (body.comment ? t.thanksComment : t.thanks) : t.thanksNotUseful);
      status.focus();
      if (typeof options.onSuccess === "function") options.onSuccess(body.feedback, reply);
    }

    function failed(kind, serverMessage, wait) {
      // A 409 says which of its two causes it is by its message.
      var cause = kind === "conflict" ? CONFLICTS[serverMessage] || kind : kind;
      var message = t.errors[cause];
      if (lang === "zh" && SERVER_WORDS[kind] === true && serverMessage) message = serverMessage;
      if (kind === "throttled" && wait) message = t.errors.throttledFor.replace("{n}", wait);
      var withRetry = RETRYABLE[cause] === true;
      show("error", message, withRetry);
      // Bring focus to what the reader can do next, or to the message.
      (withRetry ? retry : alertBox).focus();
      if (typeof options.onError === "function") options.onError(kind, serverMessage);
    }

    function send(body) {
      if (busy) return;
      lastBody = body;
      show("", t.sending);
      // The buttons are disabled while sending, which would drop focus to the page: it
      // waits on the progress message instead, until the thanks or what to do next.
      status.focus();
      setBusy(true);
      // A service that takes the connection and never answers must not leave the reader
      // on "sending…": after `timeout` the request is aborted and ends as a network error.
      var controller = typeof global.AbortController === "function" ? new global.AbortController() : null;
      var settled = false;
      // A reply recorded, or the kind of failure (with the service's words and wait).
      function settle(reply, kind, serverMessage, wait) {
        if (settled) return;
        settled = true;
        global.clearTimeout(timer);
        setBusy(false);
        if (reply) finished(body, reply);
        else failed(kind, serverMessage, wait);
      }
      var timer = global.setTimeout(function () {
        if (controller) controller.abort();
        settle(null, "network");
      }, timeout);
      global
        .fetch(options.endpoint, {
          method: "POST",
          mode: "cors",
          credentials: "omit",
          headers: {
            "Content-Type": "application/json",
            Authorization: "Feedback " + options.token
          },
          body: JSON.stringify(body),
          signal: controller ? controller.signal : undefined
        })
        .then(
          function (response) {
            return response
              .json()
              .catch(function () {
                return null;
              })
              .then(function (data) {
                if (response.ok && data && data.success) settle(data);
                else settle(null, errorKind(response.status, data), data && data.message, retryAfter(response));
              });
          },
          function () {
            settle(null, "network");
          }
        );
    }

    usefulButton.addEventListener("click", function () {
      setFormOpen(false);
      send({ sessionId: options.sessionId, feedback: "useful" });
    });
    // A double click is one click: its second would close what the first opened.
    notUsefulButton.addEventListener("click", function (event) {
      if (event.detail > 1) return;
      openForm(form.hidden);
    });
    cancelButton.addEventListener("click", function () {
      openForm(false);
    });
    form.addEventListener("keydown", function (event) {
      if (event.key === "Escape") openForm(false);
    });
    // "Choose a reason" goes as soon as one is chosen, not at the next submit.
    reasons.addEventListener("change", function () {
      if (reasons.hasAttribute("aria-invalid")) show("", "");
    });
    form.addEventListener("submit", function (event) {
      event.preventDefault();
      var chosen = form.querySelector("input[type=radio]:checked");
      if (!chosen) {
        show("error", t.chooseReason);
        askForReason(true);
        radios[0].querySelector("input").focus();
        return;
      }
      var body = { sessionId: options.sessionId, feedback: "not_useful", reason: chosen.value };
      if (comment.area.value.trim()) body.comment = comment.area.value;
      if (correction.area.value.trim()) body.correction = correction.area.value;
      send(body);
    });

    // A double click's second press lands where "Change" was, which the first hid: on the
    // page, whose press would take focus from the buttons. The presses of that same click
    // (the browser counts them in `detail`) leave focus where it is; a new click ends this.
    function keepFocus(event) {
      if (event.detail > 1) event.preventDefault();
      else doc.removeEventListener("mousedown", keepFocus, true);
    }
    changeButton.addEventListener("click", function (event) {
      verdict.hidden = true;
      setNoteOpen(false);
      choice.hidden = false;
      show("", "");
      usefulButton.focus();
      if (event.detail > 0) doc.addEventListener("mousedown", keepFocus, true);
    });
    addCommentButton.addEventListener("click", function (event) {
      if (event.detail > 1) return;
      openNote(noteForm.hidden);
    });
    noteCancel.addEventListener("click", function () {
      openNote(false);
    });
    noteForm.addEventListener("keydown", function (event) {
      if (event.key === "Escape") openNote(false);
    });
    noteForm.addEventListener("submit", function (event) {
      event.preventDefault();
      // Nothing written, nothing to send.
      if (!note.area.value.trim()) return openNote(false);
      send({ sessionId: options.sessionId, feedback: "useful", comment: note.area.value });
    });

    return {
      element: root,
      unmount: function () {
        doc.removeEventListener("mousedown", keepFocus, true);
        element.innerHTML = "";
      }
    };
  }

  global.DiagnosisFeedback = { mount: mount, version: "1" };
})(typeof window !== "undefined" ? window : this);

package dev.llmlat.agent.gateway.internal;

import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Flow;

/**
 * Passes a streamed upstream body through unchanged, showing its buffers to the {@link
 * UpstreamExchange} as the JDK client hands them on (reactive-streams signals come one at a time).
 */
final class JdkUpstreamBodySubscriber<T> implements HttpResponse.BodySubscriber<T> {
  private final HttpResponse.BodySubscriber<T> delegate;
  private final UpstreamExchange exchange;

  JdkUpstreamBodySubscriber(HttpResponse.BodySubscriber<T> delegate, UpstreamExchange exchange) {
    this.delegate = delegate;
    this.exchange = exchange;
  }

  @Override
  public CompletionStage<T> getBody() {
    return delegate.getBody();
  }

  @Override
  public void onSubscribe(Flow.Subscription subscription) {
    delegate.onSubscribe(subscription);
  }

  @Override
  public void onNext(List<ByteBuffer> buffers) {
    if (exchange.waiting()) {
      // before the delegate: it may consume the buffers
      for (int i = 0; i < buffers.size(); i++) {
        exchange.onBytes(buffers.get(i));
      }
    }
    delegate.onNext(buffers);
  }

  @Override
  public void onError(Throwable throwable) {
    delegate.onError(throwable);
  }

  @Override
  public void onComplete() {
    delegate.onComplete();
  }
}
